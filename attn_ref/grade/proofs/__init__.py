"""Runs in the grader's process, for the instructor: proofs that an assignment's checks have teeth (trivial
stubs and declared mutants lose points, verdicts hold under many seeds), behind `attn-ref check`. May import
every room of attn_ref.grade below it; nothing in the grader imports it."""

# The seed sweep's numbers, read by sweep.py and by the check that runs it (release/check.py): 1,500 seeds see a
# verdict flipping under one seed in 500 with 95 % confidence (1 − (1 − 1/500)^1500 ≈ 0.95); a verdict on values
# held MARGIN times from its tolerance under every seed swept (a pass using at most 1/MARGIN of it, a miss by
# MARGIN times it) is held by that margin, and a line nearer is swept again under SEEDS_FOR_ONE_IN_500 seeds.
SEEDS_FOR_ONE_IN_500 = 1500
MARGIN = 10
