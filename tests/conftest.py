"""Shared fixtures: one release build per test session, and helpers to grade edited notebooks."""

from __future__ import annotations

import copy
import os
import sys
import unicodedata
from pathlib import Path

import nbformat
import pytest

# Every build of the suite starts cold, as a fresh clone's does: the build's cache (attn_ref/release/cache.py) is
# tested on its own, in tests/release/test_build_cache.py
os.environ.setdefault("ATTN_REF_CACHE", "off")
TESTS = Path(__file__).parent  # tests/: its helpers (loop_reference, course_units, hostile), fixtures and corpora
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))
pytest_plugins = ["hostile"]  # the attacks' modes (local, gradescope, as_user) as fixtures


@pytest.fixture(scope="session")
def release(tmp_path_factory):
    """The course built once into a temporary folder (as `make release` would at the repo root; its
    `attn-ref check` is tested on its own in test_releases.py)."""
    from course_units import COURSE

    from attn_ref.release.build import build

    out = tmp_path_factory.mktemp("release")
    built = {b.name: b for b in build(out, COURSE)}
    return out, built


def signed_in(nb: nbformat.NotebookNode, identity: str) -> nbformat.NotebookNode:
    """A copy of a practice notebook whose identity cell says ``identity`` (its Gradescope email or SID): run by
    the grader, its numbers cells give that student's numbers, and the solution's answers follow them."""
    nb = copy.deepcopy(nb)
    cells = [c for c in nb.cells if c.cell_type == "code" and 'GRADESCOPE_ID = ""' in c.source]
    assert len(cells) == 1, "no identity cell"
    cells[0].source = cells[0].source.replace('GRADESCOPE_ID = ""', f"GRADESCOPE_ID = {identity!r}")
    return nb


def edit_notebook(path: Path, replace: dict[str, str]) -> nbformat.NotebookNode:
    """A copy of the notebook where each code cell containing a key gets that key's new source."""
    nb = copy.deepcopy(nbformat.read(str(path), as_version=4))
    unused = set(replace)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for marker, source in replace.items():
            if marker in cell.source:
                cell.source = source
                cell.outputs = []
                unused.discard(marker)
    assert not unused, f"no cell contains {unused}"
    return nb


@pytest.fixture
def grade_notebook(tmp_path):
    """Write a notebook and grade it with an autograder zip; returns the results dict."""
    from attn_ref.grade import grade

    def run(nb: nbformat.NotebookNode, autograder: Path, name: str = "submission.ipynb") -> dict:
        path = tmp_path / name
        nbformat.write(nb, str(path))
        return grade(path, autograder, out_dir=tmp_path / "out")

    return run


def _auto(results: dict) -> list[dict]:
    """The automatically graded entries (not the written answers, which carry 0 points for the TAs)."""
    return [t for t in results["tests"] if "written" not in t.get("tags", [])]


def scores(results: dict) -> dict[str, float]:
    return {t["name"].split(":")[0]: t["score"] for t in _auto(results)}


def max_scores(results: dict) -> dict[str, float]:
    return {t["name"].split(":")[0]: t["max_score"] for t in _auto(results)}


HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # Unicode's categories the text rule lets through nowhere


def hidden_characters(text: str, lines: bool = False) -> list[str]:
    """The characters of ``text`` that no output may hold (but newlines and tabs where ``lines``): text.py's rule."""
    return [c for c in text if unicodedata.category(c) in HIDDEN and not (lines and c in "\n\t")]


def json_strings(value, key: str = "") -> list[tuple[str, str]]:
    """Every string of a JSON value, keys too, each with the key it stands under."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in [(key, k), *json_strings(v, k)]]
    if isinstance(value, list):
        return [item for v in value for item in json_strings(v, key)]
    return []
