"""The seed sweep's record (release/sweep_record.py): keyed per task by what its verdicts depend on and nothing
else, read back only in its format, written byte for byte the same, held to each check's own first sweep; and
`attn-ref check` sweeping whole only the tasks whose key changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from course_units import COURSE

from attn_ref.release import sweep_record
from attn_ref.release.check import RECORD_PASSES as PASSES
from attn_ref.release.check import BundledGrader, mutant_sources, sweep_row
from attn_ref.release.course import load_course

TESTS = Path(__file__).resolve().parents[1]
STATS = TESTS / "fixtures" / "stats_course"


def _lab_mutants() -> dict[str, list[tuple[str, str]]]:
    return mutant_sources(load_course(COURSE, "lab")[0])


def _zip_with(source: Path, path: Path, member: str, change) -> Path:
    """A copy of an autograder zip whose ``member`` went through ``change`` (bytes -> bytes)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w") as new:
        for item in old.infolist():
            data = old.read(item)
            new.writestr(item, change(data) if item.filename == member else data)
    return path


def _changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    assert before.keys() == after.keys()
    return {task for task in before if before[task] != after[task]}


def test_the_committed_record_holds_this_release(release):
    """course/lab/sweep-record.json is the lab's sweep as the code stands: a change to a task, its mutants or the
    grader's files the sweep runs needs the record made again (`attn-ref build --only lab` sweeps what changed)
    and committed; else every fresh clone's check sweeps the lab whole (about 15 minutes on 2 cores)."""
    out, _ = release
    committed = sweep_record.read(sweep_record.path(COURSE / "lab"))
    keys = sweep_record.task_keys(out / "autograder" / "lab-autograder.zip", _lab_mutants(), PASSES)
    stale = sorted(task for task, key in keys.items() if committed.get(task, ("",))[0] != key)
    assert not stale, f"course/lab/sweep-record.json does not hold {stale}: run `attn-ref build --only lab` and commit it"


def test_a_tasks_key_changes_with_what_its_verdicts_depend_on_and_nothing_else(release, tmp_path):
    out, _ = release
    lab_zip = out / "autograder" / "lab-autograder.zip"
    mutants = _lab_mutants()
    keys = sweep_record.task_keys(lab_zip, mutants, PASSES)
    assert keys == sweep_record.task_keys(lab_zip, mutants, PASSES) and len(set(keys.values())) == len(keys) == 8
    edited = {**mutants, "c3": [*mutants["c3"][:-1], (mutants["c3"][-1][0], mutants["c3"][-1][1] + "\n# edited\n")]}
    assert _changed(keys, sweep_record.task_keys(lab_zip, edited, PASSES)) == {"c3"}

    def wider_c7(data: bytes) -> bytes:
        checks = json.loads(data)
        c7 = next(u for u in checks["units"] if u["name"] == "c7")
        c7["probes"][0]["name"] += " (edited)"
        return json.dumps(checks).encode()

    probes = _zip_with(lab_zip, tmp_path / "probes.zip", "checks.json", wider_c7)
    assert _changed(keys, sweep_record.task_keys(probes, mutants, PASSES)) == {"c7"}
    setup = _zip_with(lab_zip, tmp_path / "setup.zip", "setup.sh", lambda data: data + b"\n# another image\n")
    assert _changed(keys, sweep_record.task_keys(setup, mutants, PASSES)) == set()  # installs, never sweeps
    comparators = _zip_with(lab_zip, tmp_path / "grader.zip", "attn_ref/grade/scoring/comparators.py",
                            lambda data: data + b"\n# another grader\n")
    assert _changed(keys, sweep_record.task_keys(comparators, mutants, PASSES)) == set(keys)
    for member in ("attn_ref/grade/inkernel/harness.py", "attn_ref/grade/scoring/mutant_match.py",
                   "attn_ref/grade/student_python/sweep_runner.py", "attn_ref/attention.py"):  # sent, matched, run, compared to
        changed = _zip_with(lab_zip, tmp_path / "changed.zip", member, lambda data: data + b"\n# changed\n")
        assert _changed(keys, sweep_record.task_keys(changed, mutants, PASSES)) == set(keys), member
    for member in ("attn_ref/grade/classroom/report.py", "attn_ref/grade/classroom/canvas.py", "attn_ref/grade/cli.py"):
        ta_side = _zip_with(lab_zip, tmp_path / "ta.zip", member, lambda data: data + b"\n# a TA's page\n")
        assert _changed(keys, sweep_record.task_keys(ta_side, mutants, PASSES)) == set(), member  # the sweep never runs it
    versions = _zip_with(lab_zip, tmp_path / "versions.zip", "requirements-student.txt", lambda data: data + b"\n")
    assert _changed(keys, sweep_record.task_keys(versions, mutants, PASSES)) == set(keys)
    assert _changed(keys, sweep_record.task_keys(lab_zip, mutants, {**PASSES, "whole": 1000})) == set(keys)


def test_the_key_holds_every_module_of_attn_ref_a_sweep_loads(release, tmp_path):
    """The grader's part of a key is worked out from imports (sweep_record.grader_members): a sweep run through the
    zip's own grader, as the check runs it, loads no module of attn_ref outside it."""
    out, _ = release
    lab_zip = out / "autograder" / "lab-autograder.zip"
    grader = BundledGrader(lab_zip, tmp_path)
    mutants = tmp_path / "mutants.json"
    mutants.write_text(json.dumps(_lab_mutants()))
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "attn_ref", "probe-sweep", "--autograder",
                           str(lab_zip), "--mutants", str(mutants), "--out", str(tmp_path / "swept.json"), "--seeds", "1",
                           "--fixed-seeds", "1", "--tasks", "c3"], env=grader.env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "swept.json").read_text())["c3"]["lines"]  # it swept
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    loaded = {name for name in loaded if name.split(".")[0] == "attn_ref"}
    with zipfile.ZipFile(lab_zip) as archive:
        sources = {i.filename: archive.read(i) for i in archive.infolist() if i.filename.startswith("attn_ref/")}
    members = set(sweep_record.grader_members(sources))
    files = {name: {f"{name.replace('.', '/')}{end}" for end in (".py", "/__init__.py")} & set(sources) for name in loaded}
    outside = sorted(name for name, found in files.items() if found and not found & members)  # (the builder's own
    assert "attn_ref.grade.scoring.comparators" in loaded and not outside, outside  # release/ is in no zip)


def test_a_record_is_read_back_only_in_its_format_and_written_the_same_twice(tmp_path):
    file = sweep_record.path(tmp_path / "lab")
    line = {"passed": 1500, "failed": 0, "seeds": 1500}
    entries = {"c2": ("b" * 64, {"lines": {"solution": {"x": line}}, "broken": {}}),
               "c1": ("a" * 64, {"lines": {"solution": {"y": line}}, "broken": {"mutant": "SyntaxError: ..."}})}
    assert sweep_record.write(file, 1500, entries)
    first = file.read_bytes()
    assert not sweep_record.write(file, 1500, dict(reversed(entries.items())))  # the same bytes: left untouched
    assert file.read_bytes() == first and sweep_record.read(file) == entries
    assert sweep_record.read(tmp_path / "missing.json") == {}
    for text in ("{not json", "[]", json.dumps({"format": 1, "tasks": json.loads(first)["tasks"]}),
                 json.dumps({"format": 2, "tasks": []})):
        file.write_text(text)
        assert sweep_record.read(file) == {}, text
    record = json.loads(first)
    record["tasks"]["c1"]["swept"]["lines"] = {"solution": ["not", "a", "line"]}  # one entry malformed: that one alone
    record["tasks"]["c3"] = "not an entry"
    file.write_text(json.dumps(record))
    assert sweep_record.read(file) == {"c2": entries["c2"]}


def test_a_first_sweep_that_sees_a_verdict_the_record_never_saw_disagrees():
    record = {"lines": {"solution": {"x": {"passed": 1500, "failed": 0}},
                        "m": {"x": {"passed": 0, "failed": 1500}, "y": {"passed": 3, "failed": 1497}}}}

    def spot(**lines) -> dict:
        return {"lines": {"solution": {"x": {"passed": 20, "failed": 0}}, "m": lines}}

    assert sweep_record.disagreements("c1", spot(x={"passed": 0, "failed": 20}, y={"passed": 1, "failed": 19}), record) == []
    (passed_here,) = sweep_record.disagreements("c1", spot(x={"passed": 1, "failed": 19}), record)
    assert "c1: 'x' of m" in passed_here and "1 passed and 19 failed here, 0 and 1500 in the record" in passed_here
    (unknown,) = sweep_record.disagreements("c1", spot(z={"passed": 20, "failed": 0}), record)
    assert "'z' of m is not in the record" in unknown


@pytest.mark.slow  # the second course's one task swept whole once, then held by its record: about half a minute
def test_check_sweeps_whole_only_the_tasks_its_record_does_not_hold(tmp_path):
    """The first check of a release sweeps every line of its task under 1,500 seeds and writes the record; the next
    holds the record once its own first sweep agrees; a record that a first sweep contradicts fails the check, and
    a task whose key changed (here: its mutants) is swept whole again."""
    from attn_ref.release.build import build

    course = tmp_path / "course"
    shutil.copytree(STATS, course)
    out = tmp_path / "release"
    build(out, course, only="stats")  # built, not checked
    stats = load_course(course, "stats")[0]
    stats_zip = out / "autograder" / "stats-autograder.zip"
    record = sweep_record.path(stats.folder)
    assert record.parent == course / "stats"  # travels with the course, not the release

    def row():
        work = tmp_path / f"work-{len(list(tmp_path.glob('work-*')))}"
        work.mkdir()
        return sweep_row("stats", stats, BundledGrader(stats_zip, work), work)

    first = row()
    assert first.ok and "1 of 1 tasks swept whole" in first.detail, first.detail
    written = sweep_record.read(record)
    assert {v["seeds"] for lines in written["zscore"][1]["lines"].values() for v in lines.values()} == {1500}
    held = row()
    assert held.ok and "0 of 1 tasks swept whole" in held.detail, held.detail
    contradicted = json.loads(record.read_text())
    lines = contradicted["tasks"]["zscore"]["swept"]["lines"]["solution"]
    some_line = next(iter(lines))
    lines[some_line].update(passed=0, failed=1500)
    record.write_text(json.dumps(contradicted))
    told = row()
    assert not told.ok and "does not hold on this machine" in told.detail and some_line in told.detail
    record.write_text(json.dumps(contradicted))
    mutant = next((course / "stats" / "zscore" / "mutants").glob("*.py"))
    mutant.write_text(mutant.read_text() + "\n# edited\n")
    stats = load_course(course, "stats")[0]
    again = row()
    assert again.ok and "1 of 1 tasks swept whole" in again.detail, again.detail


def test_a_verdict_of_the_sweep_that_grading_does_not_give_fails_the_check():
    """probe-mutants grades each mutant and stub in a notebook kernel, as a submission is graded (seed 0); the sweep
    calls them through the harness alone. Where a line's verdict holds under every seed swept, grading must give
    it too, or the sweep proves nothing of grading."""
    from attn_ref.grade.proofs.stubs import KINDS
    from attn_ref.release.check import graded_otherwise

    lab = load_course(COURSE, "lab")[0]
    c3 = next(t for t in lab.tasks if t.name == "c3")
    mutant, line, stub = c3.mutants[0].label, c3.probes[0].name, next(iter(KINDS))
    failed = {"passed": 0, "failed": 1500}
    swept = {"c3": {"lines": {mutant: {line: failed}, f"stub: {stub}": {line: failed}}}}

    def graded(passed: int) -> dict:
        return {"mutants": {"c3": {mutant: {"passed": {line: passed}}}}, "stubs": {"c3": {stub: {"passed": {line: passed}}}}}

    assert graded_otherwise(lab, graded(0), swept) == []
    told = graded_otherwise(lab, graded(1), swept)
    assert len(told) == 2 and all("passed in grading (seed 0), failed under every seed swept" in t for t in told), told
    assert any(mutant in t for t in told) and any(f"stub: {stub}" in t for t in told)


def test_a_failed_build_moves_nothing_into_place_and_the_record_stays_with_the_course(tmp_path):
    """The record is what was swept (a quarter of an hour for the lab), kept with the course, not the release: a
    build whose checks fail moves nothing into place, and what its check swept stays for the next build, into
    any --out."""
    from attn_ref.release.build import BuildError, build

    course = tmp_path / "course"
    shutil.copytree(STATS, course)
    record = sweep_record.path(course / "stats")
    entry = {"zscore": ("k" * 64, {"lines": {}, "broken": {}})}

    def failing(staged, built):
        sweep_record.write(record, 1500, entry)  # as the check writes it
        raise BuildError("the checks failed")

    with pytest.raises(BuildError):
        build(tmp_path / "release", course, only="stats", verify=failing)
    assert not [p for p in (tmp_path / "release").rglob("*") if p.is_file()]
    assert sweep_record.read(record) == entry


def test_a_task_the_solution_does_not_score_full_under_a_seed_is_named_with_its_first_failed_line():
    """probe-seeds grades the solution's tasks once per seed through grading's own path (grade_under_seeds); a task
    short of full under any seed fails the check, naming the seed, the task and the line (before grade_under_seeds
    removed each seed's call folders, the kernel died mid-call from about the 46th seed)."""
    from attn_ref.release.check import not_full

    full = {"name": "c5: One head", "score": 10, "max_score": 10, "output": "✓ causal (2/2)"}
    short = {**full, "score": 8, "output": "✓ leaves x unchanged (1/1)\n✗ causal (0/2): the call crashed the kernel"}
    assert not_full({"0": {"c5": full}, "1": {"c5": full}}) == []
    assert not_full({"0": {"c5": full}, "93": {"c5": short}}) == ["seed 93: c5: One head 8/10 ✗ causal (0/2): the call crashed the kernel"]
