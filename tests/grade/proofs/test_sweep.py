"""The seed sweep (grade/proofs/sweep.py) and the check that reads it (release/check.py): a verdict that changes
with the seed is found and named, a mutant is named in its own words, and each seed starts from fresh state."""

from __future__ import annotations

from pathlib import Path

import pytest
from course_units import COURSE

from attn_ref.grade.proofs.sweep import SOLUTION, sweep
from attn_ref.grade.scoring.autograder import load_autograder
from attn_ref.grade.scoring.inputs import draw_dims, probe_rng, seed_free
from attn_ref.release.check import flipped_lines, named_share
from attn_ref.release.course import load_assignment, load_registry

SEEDS = range(20)
DRAWN = "no mask: B, H, T_q ≠ T_k, d_k ≠ d_v drawn per grading"  # c3's line whose sizes are drawn
# right unless the drawn T_q is odd: a bug some seeds hide (T_q is drawn from 2 to 9)
ODD_T_Q = """
_right = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None):
    out, weights = _right(q, k, v, mask)
    return (out * 2 if q.shape[-2] % 2 else out), weights
"""
# right on its first ten calls, wrong after: state a graded kernel never carries from one submission to the next
STATEFUL = """
_calls = []
_right = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None):
    _calls.append(1)
    out, weights = _right(q, k, v, mask)
    return (out * 2 if len(_calls) > 10 else out), weights
"""
# off by 3e-5 of the output (1.5 times the line's tolerance), except where q's first entry is within 0.004 of 0: on
# the drawn line, right under seed 138 alone of seeds 0 .. 199 (a flip 20 seeds miss; its misses stay near tolerance)
RARELY_RIGHT = """
_right = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None):
    out, weights = _right(q, k, v, mask)
    return (out if abs(float(q.flatten()[0])) < 0.004 else out * (1 + 3e-5)), weights
"""
SCALED_BY_D = COURSE / "lab" / "c3" / "mutants" / "scales_by_d_instead_of_sqrt_d.py"


@pytest.fixture(scope="module")
def swept(release) -> dict:
    out, _ = release
    mutants = {"c3": [("odd T_q", ODD_T_Q), ("stateful", STATEFUL), ("scales by d", SCALED_BY_D.read_text())]}
    return sweep(out / "autograder" / "lab-autograder.zip", mutants, SEEDS, with_stubs=False, tasks={"c3"})


def test_a_verdict_that_changes_with_the_seed_is_found_and_named(swept):
    odd = swept["c3"]["lines"]["odd T_q"][DRAWN]
    assert odd["passed"] and odd["failed"] and odd["passed"] + odd["failed"] == len(SEEDS)
    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    problems = flipped_lines(lab, swept)
    assert len(problems) == 1 and "odd T_q" in problems[0] and DRAWN in problems[0], problems
    assert str(Path("c3") / "task.py") in problems[0]


def test_the_solution_passes_every_line_under_every_seed(swept):
    for line, v in swept["c3"]["lines"][SOLUTION].items():
        assert (v["passed"], v["failed"]) == (len(SEEDS), 0), line


def test_each_seed_starts_from_fresh_state(swept):
    """The stateful mutant's eleventh call comes only after more than one seed's probes: it passes everywhere."""
    assert all(v["failed"] == 0 for v in swept["c3"]["lines"]["stateful"].values())


def test_a_declared_mutant_is_named_in_its_own_words_under_every_seed_it_fails(swept):
    scaled = swept["c3"]["lines"]["scales by d"]
    assert scaled[DRAWN]["failed"] == len(SEEDS) and scaled[DRAWN]["named"] == len(SEEDS)
    assert not scaled[DRAWN]["misnamed"]
    unnamed_odd = swept["c3"]["lines"]["odd T_q"][DRAWN]
    assert unnamed_odd["named"] == 0  # not a declared mutant: nothing names it


def test_the_named_share_counts_mutants_and_leaves_out_those_that_only_raise(swept):
    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    c3 = next(t for t in lab.tasks if t.name == "c3")
    scaled = next(m for m in c3.mutants if Path(m.path).name == SCALED_BY_D.name)
    raising = {"lines": {scaled.label: {DRAWN: {"passed": 0, "failed": 3, "raised": 3, "named": 0, "misnamed": {}}}}}
    counted, unnamed, only_raising, _ = named_share(lab, {"c3": raising})
    assert not counted and only_raising == [str(scaled.path)]
    quiet = {"lines": {scaled.label: {DRAWN: {"passed": 0, "failed": 3, "raised": 0, "named": 2, "misnamed": {}}}}}
    counted, unnamed, only_raising, _ = named_share(lab, {"c3": quiet})  # named under 2 of its 3 failing seeds: not named
    assert [m.label for m in counted] == [scaled.label] and unnamed == [str(scaled.path)] and not only_raising
    # failed only in the second sweep (near its tolerance), where no name is asked: not named
    late = {"lines": {scaled.label: {DRAWN: {"passed": 20, "failed": 3, "raised": 0, "named": 0, "misnamed": {}, "failed_again": 3}}}}
    assert named_share(lab, {"c3": late})[1] == [str(scaled.path)]
    named = {"lines": {scaled.label: {DRAWN: {"passed": 0, "failed": 23, "raised": 0, "named": 20, "misnamed": {}, "failed_again": 3}}}}
    assert named_share(lab, {"c3": named})[1] == []  # named under every seed of the first sweep it failed


def test_a_flip_too_rare_for_the_first_sweep_is_found_where_the_values_came_near_the_tolerance(release):
    """The second sweep: a line whose misses came within 10x of its tolerance is swept again until it has
    near_seeds seeds, and the flip the first sweep's 20 seeds missed is reported; a line far from its tolerance
    (or that compares no values) is not swept again, except a line whose sizes are drawn."""
    out, _ = release
    autograder, mutants = out / "autograder" / "lab-autograder.zip", {"c3": [("rarely right", RARELY_RIGHT)]}
    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    first = sweep(autograder, mutants, SEEDS, with_stubs=False, tasks={"c3"})["c3"]["lines"]["rarely right"]
    assert (first[DRAWN]["passed"], first[DRAWN]["failed"]) == (0, len(SEEDS)) and first[DRAWN]["near_its_tolerance"]
    again = sweep(autograder, mutants, SEEDS, with_stubs=False, tasks={"c3"}, near_seeds=200)
    lines = again["c3"]["lines"]["rarely right"]
    assert (lines[DRAWN]["seeds"], lines[DRAWN]["passed"], lines[DRAWN]["pass_seed"]) == (200, 1, 138)
    assert lines[DRAWN]["failed_again"] == 180 - 1
    unchanged = "leaves q, k, v and the mask unchanged"
    assert lines[unchanged]["seeds"] == len(SEEDS) and not lines[unchanged]["near_its_tolerance"]
    solution = again["c3"]["lines"][SOLUTION]  # far from its tolerance, but its sizes are drawn: swept again too
    assert (solution[DRAWN]["seeds"], solution[DRAWN]["passed"]) == (200, 200) and solution[unchanged]["seeds"] == len(SEEDS)
    problems = flipped_lines(lab, again)
    assert any("rarely right" in p and DRAWN in p and "seed 138" in p for p in problems), problems


def _drawn_sizes(autograder: Path, seeds: range) -> dict[int, tuple]:
    """{seed: c3's drawn sizes (B, H, T_q, T_k, d_k, d_v) on DRAWN}, as grading draws them."""
    checks = load_autograder(autograder).checks
    t_index, c3 = next((i, u) for i, u in enumerate(checks.units) if u.name == "c3")
    p_index, probe = next((i, p) for i, p in enumerate(c3.probes) if p.name == DRAWN)
    order = ("B", "H", "T_q", "T_k", "d_k", "d_v")
    return {seed: tuple(draw_dims(probe, probe_rng(seed, t_index, p_index))[n] for n in order) for seed in seeds}


def test_a_mistake_only_one_rare_size_shows_is_found_on_every_implementations_drawn_line(release):
    """A mutant far from the tolerance on every seed (its output doubled), but only for one combination of drawn
    sizes that the first sweep's 20 seeds never draw: the second sweep calls every implementation's drawn lines
    again, whatever their margin, and the check reports the flip (a rare size leaves a mistake uncharged)."""
    out, _ = release
    autograder = out / "autograder" / "lab-autograder.zip"
    sizes = _drawn_sizes(autograder, range(200))
    first = set(sizes[s] for s in SEEDS)
    rare_seed = next(s for s in range(len(SEEDS), 200) if sizes[s] not in first
                     and list(sizes.values()).count(sizes[s]) == 1)
    B, H, T_q, T_k, d_k, d_v = sizes[rare_seed]
    wrong_there = f"""
_right = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None):
    out, weights = _right(q, k, v, mask)
    rare = tuple(q.shape) == ({B}, {H}, {T_q}, {d_k}) and k.shape[-2] == {T_k} and v.shape[-1] == {d_v}
    return (out * 2 if rare else out), weights
"""
    mutants = {"c3": [("rarely wrong", wrong_there)]}
    first_sweep = sweep(autograder, mutants, SEEDS, with_stubs=False, tasks={"c3"})["c3"]["lines"]["rarely wrong"]
    assert (first_sweep[DRAWN]["passed"], first_sweep[DRAWN]["failed"]) == (len(SEEDS), 0)
    assert not first_sweep[DRAWN]["near_its_tolerance"]  # its values are right or far off: no margin calls it back
    again = sweep(autograder, mutants, SEEDS, with_stubs=False, tasks={"c3"}, near_seeds=200)["c3"]["lines"]["rarely wrong"]
    assert (again[DRAWN]["seeds"], again[DRAWN]["failed"], again[DRAWN]["fail_seed"]) == (200, 1, rare_seed)
    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    problems = flipped_lines(lab, {"c3": {"lines": {"rarely wrong": again}}})
    assert any("rarely wrong" in p and DRAWN in p and f"seed {rare_seed}" in p for p in problems), problems


def test_a_mutant_that_keeps_state_is_called_on_every_line_under_every_seed(release):
    """Grading calls a task's lines in order, so a mutant that keeps state between calls meets each line after the
    calls before it: it is swept on all of its lines under every seed, in both sweeps, never on some lines alone
    (a line called without the drawn call before it passed where grading fails it)."""
    out, _ = release
    stateful = "# keeps state between calls\n" + STATEFUL
    found = sweep(out / "autograder" / "lab-autograder.zip", {"c3": [("stateful", stateful)]}, SEEDS, with_stubs=False,
                  tasks={"c3"}, fixed_seeds=5, near_seeds=30)["c3"]["lines"]
    assert {v["seeds"] for v in found["stateful"].values()} == {30}
    solution = found[SOLUTION]
    assert solution[DRAWN]["seeds"] == 30 and {v["seeds"] for name, v in solution.items() if name != DRAWN} == {5}


def test_a_line_whose_inputs_do_not_depend_on_the_seed_is_called_once(release):
    """c4's lines give T as a value: the same call under every seed, so one seed covers it exactly."""
    out, _ = release
    found = sweep(out / "autograder" / "lab-autograder.zip", {}, range(5), with_stubs=False, tasks={"c4"})
    assert {(v["passed"], v["failed"]) for v in found["c4"]["lines"][SOLUTION].values()} == {(1, 0)}


def test_a_flip_on_a_line_whose_sizes_may_coincide_points_to_distinct():
    """An instructor who let drawn sizes coincide (distinct=()) sees a mutant's verdict flip: the report says which
    sizes may coincide and what keeps them apart; where every size is kept apart, it says nothing of sizes."""
    from dataclasses import replace

    from attn_ref.release.units import drawn

    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    flip = {"passed": 3, "failed": 17, "pass_seed": 4, "fail_seed": 0, "fail_message": "out differs", "rtol": None}
    swept = {"c3": {"lines": {"reads T_q for d_k": {DRAWN: flip}}}}
    (kept_apart,) = flipped_lines(lab, swept)
    assert "may coincide" not in kept_apart
    c3 = next(t for t in lab.tasks if t.name == "c3")
    probe = next(p for p in c3.probes if p.name == DRAWN)
    loose = replace(probe, options={**probe.options, **drawn(distinct=(("T_q", "T_k"),), **dict(probe.options["dims"]))})
    loose_c3 = replace(c3, probes=tuple(loose if p is probe else p for p in c3.probes))
    loosened = replace(lab, units=tuple(loose_c3 if u is c3 else u for u in lab.units))
    (told,) = flipped_lines(loosened, swept)
    assert "its drawn sizes B, H, d_k, d_v may coincide" in told and "distinct=" in told


def test_a_pass_near_the_tolerance_is_held_to_the_margin_unless_1500_seeds_saw_it():
    """The 10x margin stands in for seeds: a mutant's pass within it is accepted once 1,500 seeds saw it pass (a flip
    under one seed in 500 would have shown), the solution's never (correct code that adds in another order must pass
    too)."""
    from attn_ref.grade.proofs import SEEDS_FOR_ONE_IN_500

    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))

    def passed(seeds: int) -> dict:
        return {"passed": seeds, "failed": 0, "seeds": seeds, "rtol": 1e-5, "worst_error": 3e-6, "pass_seed": 0,
                "fail_seed": None, "fail_message": ""}

    def told(label: str, seeds: int) -> list[str]:
        return flipped_lines(lab, {"c3": {"lines": {label: {DRAWN: passed(seeds)}}}})

    assert told("float32 inside", 100) and told(SOLUTION, SEEDS_FOR_ONE_IN_500)
    assert not told("float32 inside", SEEDS_FOR_ONE_IN_500)


def _first_q_entry(autograder: Path, line: str, seeds: range) -> dict[int, float]:
    """{seed: |q's first entry|} on c3's ``line``, as grading draws it."""
    from attn_ref.grade.scoring.inputs import generate

    checks = load_autograder(autograder).checks
    t_index, c3 = next((i, u) for i, u in enumerate(checks.units) if u.name == "c3")
    p_index, probe = next((i, p) for i, p in enumerate(c3.probes) if p.name == line)
    return {seed: abs(float(next(a for a in generate(probe, probe_rng(seed, t_index, p_index)) if a.name == "q").data.flat[0]))
            for seed in seeds}


def test_every_line_is_swept_under_the_seeds_asked_so_a_rare_value_flip_on_fixed_sizes_is_found(release):
    """A line with fixed sizes whose values alone are drawn: a mutant right there (no error at all) except for one
    rare value of q, where its output is doubled. The first sweep's 20 seeds never draw it and its errors stay far
    from the tolerance, so no margin calls the line back; sweeping every line (the record of `attn-ref check`) calls
    it under every seed asked and reports the flip."""
    out, _ = release
    autograder, line = out / "autograder" / "lab-autograder.zip", "bool mask, True = may attend; masked weights exactly 0"
    first = _first_q_entry(autograder, line, range(200))
    rare_seed = max(range(len(SEEDS), 200), key=first.get)
    bound = max(v for s, v in first.items() if s != rare_seed)
    assert first[rare_seed] > bound  # exactly one seed of the 200 draws q's first entry beyond it, and not among the first 20
    rarely_wrong = f"""
_right = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None):
    out, weights = _right(q, k, v, mask)
    return (out * 2 if abs(float(q.flatten()[0])) > {bound!r} else out), weights
"""
    mutants = {"c3": [("rarely wrong", rarely_wrong)]}
    margin_only = sweep(autograder, mutants, SEEDS, with_stubs=False, tasks={"c3"}, near_seeds=200)["c3"]["lines"]["rarely wrong"]
    assert (margin_only[line]["seeds"], margin_only[line]["failed"]) == (len(SEEDS), 0)
    every = sweep(autograder, mutants, SEEDS, with_stubs=False, tasks={"c3"}, near_seeds=200, every_line=True)["c3"]["lines"]
    assert (every["rarely wrong"][line]["seeds"], every["rarely wrong"][line]["fail_seed"]) == (200, rare_seed)
    c3 = next(u for u in load_autograder(autograder).checks.units if u.name == "c3")
    once = {p.name for p in c3.probes if seed_free(p)}  # its call is the same under every seed: exact once
    assert {v["seeds"] for label in every.values() for name, v in label.items() if name not in once} == {200}
    lab = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    problems = flipped_lines(lab, {"c3": {"lines": every}})
    assert any("rarely wrong" in p and line in p and f"seed {rare_seed}" in p for p in problems), problems
