"""Runs in the grader's process, for the instructor: proofs that an assignment's checks have teeth (trivial
stubs and declared mutants lose points, verdicts hold under many seeds), behind `attn-ref check`. May import
every room of attn_ref.grade below it; nothing in the grader imports it."""
