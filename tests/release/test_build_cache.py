"""The build's cache (release/cache.py): a piece of a release is reused only where nothing it depends on changed,
a warm build gives the bytes a cold one gives, and a build whose every check key matches a check that passed
says so instead of checking again."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import pytest

from attn_ref.release import build as building
from attn_ref.release import cache, sweep_record
from attn_ref.release.course import load_course

STATS = Path(__file__).resolve().parents[1] / "fixtures" / "stats_course"


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _versions(staged: Path, built) -> None:
    """A stand-in for attn-ref check: what it leaves in the release (the versions report)."""
    for b in built:
        (staged / "autograder" / f"{b.name}-versions.txt").write_text(f"{b.name}: checked\n")


def test_a_warm_build_takes_every_piece_from_the_cache_and_gives_the_cold_builds_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path / "cache"))
    course = tmp_path / "course"
    shutil.copytree(STATS, course)
    checked, said = [], []

    def verify(staged, built):
        checked.append([b.name for b in built])
        _versions(staged, built)

    cold = building.build(tmp_path / "cold", course, only="stats", verify=verify, say=said.append)
    assert checked == [["stats"]] and not cold[0].cached
    said.clear()
    warm = building.build(tmp_path / "warm", course, only="stats", verify=verify, say=said.append)
    assert warm[0].cached and checked == [["stats"]], said  # no check made again
    assert any("notebooks from the cache" in line for line in said) and any("check: skipped" in line for line in said)
    assert _tree(tmp_path / "cold") == _tree(tmp_path / "warm")  # byte for byte, the versions report included
    prompt = course / "stats" / "zscore" / "prompt.md"
    prompt.write_text(prompt.read_text() + "\nOne more sentence.\n")
    edited = building.build(tmp_path / "edited", course, only="stats", verify=verify, say=said.append)
    assert not edited[0].cached and checked == [["stats"], ["stats"]]
    assert "One more sentence." in (tmp_path / "edited/assignments/stats/stats.ipynb").read_text()


def test_a_check_that_failed_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path / "cache"))
    calls = []

    def failing(staged, built):
        calls.append(1)
        raise building.BuildError("the checks failed")

    for _ in range(2):
        with pytest.raises(building.BuildError):
            building.build(tmp_path / "release", STATS, only="stats", verify=failing)
    assert len(calls) == 2


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENVIRONMENT, "off")
    assert cache.root(tmp_path) is None
    monkeypatch.delenv(cache.ENVIRONMENT)
    assert cache.root(tmp_path) == tmp_path / ".attn-ref-cache"  # with the course: a fresh clone has none


def test_each_input_of_a_piece_changes_its_key(tmp_path, monkeypatch):
    """Whatever a key misses would be a wrong proof: each input, changed alone, gives another key; the seed-sweep
    record is an input of the check, not of the notebooks."""
    course = tmp_path / "course"
    shutil.copytree(STATS, course)
    release = tmp_path / "release"
    built = building.build(release, course, only="stats")  # no check
    b = built[0]

    def keys(shared=None) -> tuple[str, str]:
        a = load_course(course, "stats")[0]
        shared = shared or building.Shared.of(course)
        return building.notebooks_key(a, False, shared), building.check_key(a, release, b, shared)

    base = keys()
    assert keys() == base

    def changed(edit) -> tuple[bool, bool]:
        edit()
        now = keys()
        return now[0] != base[0], now[1] != base[1]

    a = load_course(course, "stats")[0]
    record = sweep_record.path(a.folder)
    assert changed(lambda: record.write_text("{}")) == (False, True)
    record.unlink()
    mutant = next((course / "stats" / "zscore" / "mutants").glob("*.py"))
    original = mutant.read_text()
    assert changed(lambda: mutant.write_text(original + "\n# edited\n")) == (False, True)  # no notebook holds it
    mutant.write_text(original)
    assert keys() == base
    solution_source = course / "stats" / "zscore" / "solution.py"
    source = solution_source.read_text()
    assert changed(lambda: solution_source.write_text(source + "\n")) == (True, True)
    solution_source.write_text(source)
    registry = course / "registry.py"
    text = registry.read_text()
    assert changed(lambda: registry.write_text(text + "\n")) == (True, True)
    registry.write_text(text)
    zip_bytes = b.autograder.read_bytes()
    assert changed(lambda: b.autograder.write_bytes(zip_bytes + b"\0")) == (False, True)
    b.autograder.write_bytes(zip_bytes)
    solution = release / "solutions" / "stats" / "stats.ipynb"
    notebook = solution.read_bytes()
    assert changed(lambda: solution.write_bytes(notebook + b"\n")) == (False, True)
    solution.write_bytes(notebook)
    assert keys() == base
    shared = building.Shared.of(course)
    for field, value in (("package", "another attn_ref"), ("locks", ("another lock", "")),
                         ("environment", ("numpy==0.0",))):
        other = keys(dataclasses.replace(shared, **{field: value}))
        assert other[0] != base[0] and other[1] != base[1], field
    monkeypatch.setattr(cache, "student_environment", lambda: ["another students' environment"])
    assert keys()[0] == base[0] and keys()[1] != base[1]
