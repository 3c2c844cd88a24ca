"""The course as the tests see it: its assignments, the practice answer key and the lab's mutants.

MUTANTS[task] is a list of (what is wrong, marker of the cell to replace, mutant source, a probe it must
fail), read from course/lab/<task>/mutants/*.py, where `attn-ref check` reads them too.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from attn_ref.release.course import Assignment, load_course

COURSE = Path(__file__).resolve().parents[1] / "course"


@cache
def assignment(name: str) -> Assignment:
    return load_course(COURSE, name)[0]


def answer_key(name: str = "practice") -> dict:
    return {a.name: a.expected for q in assignment(name).units for a in q.answers}


ANSWERS = answer_key()
MUTANTS = {t.name: [(m.label, f"def {t.function}(", m.source, m.must_fail) for m in t.mutants] for t in assignment("lab").units}
N_SETS = max(len(m) for m in MUTANTS.values())


def bug_set(k: int) -> dict[str, tuple]:
    """The k-th mutant of every task that has one: {task: (label, marker, source, failing probe)}."""
    return {task: mutants[k] for task, mutants in MUTANTS.items() if k < len(mutants)}
