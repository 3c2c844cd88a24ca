"""Gradescope's results format (results.json): entries, the score-0 result, what every result records,
and writing it atomically. Student-originated text is capped here."""

from __future__ import annotations

import html
import json
from enum import Enum
from pathlib import Path

from .checks_json import Checks, QuestionUnit, Unit
from .inkernel.text import cap, plain_lines, plain_text
from .owned import write_private

# extra_data keys that tie a results file to what it graded: two different hashes, so two names. (The seed of a
# grading's probe inputs is a third, the submission's code cells with the seed key: scoring/inputs.py seed_for.)
CONTENT_HASH = "content_hash"  # a class's batch: its files' names and bytes (discover.content_hash); skips work done
FILE_HASH = "file_hash"  # one notebook graded alone: its bytes (a folder: its path); whose results OUT/results/<stem>.json holds
LEGACY_HASH = "submission_hash"  # what both were written as before they had names of their own: still read


def recorded_hash(extra: dict, key: str):
    """The hash ``key`` names in a results file's extra_data, or the one an older grader wrote."""
    return extra.get(key, extra.get(LEGACY_HASH))


MAX_OUTPUT_TEXT = 8000  # one test's output
MAX_NOTES = 4000  # the results' own output


# Gradescope shows these outputs as plain text: student text in them (an exception's message, a class's
# name) is never read as HTML or Markdown. Written answers are the one html entry, escaped inside <pre>.
TEXT = "text"


def cap_lines(text: str, limit: int) -> str:
    """The grader's own lines (each already made safe by whoever put student text in it), bounded."""
    return plain_lines(text[:limit])


def max_points(unit: Unit, cuda: bool) -> float:
    if isinstance(unit, QuestionUnit):
        return sum(a.points for a in unit.answers)
    return sum(p.points for p in unit.probes if cuda or p.device != "cuda")


def entry(unit: Unit, lines: list[tuple[bool, str, float, str]], visibility: str, cuda: bool = False) -> dict:
    """One Gradescope test entry; lines are (passed, label, points, message: why it failed, or a note).

    Each line is the grader's: a message (which may quote the student: an exception's text, a name) is
    made one line, so no student text can begin a line of its own."""
    output = "\n".join(
        f"{'✓' if ok else '✗'} {plain_text(label)} ({points if ok else 0:g}/{points:g})" + (f": {plain_text(msg)}" if msg else "")
        for ok, label, points, msg in lines
    )
    return {
        "name": f"{unit.name}: {unit.title}",
        "score": round(sum(points for ok, _, points, _ in lines if ok), 6),
        "max_score": max_points(unit, cuda),
        "output": cap_lines(output, MAX_OUTPUT_TEXT),
        "output_format": TEXT,
        "visibility": visibility,
    }


MAX_WRITTEN = 5000  # characters of a written answer shown to graders


def written_entries(checks: Checks, answers: dict[str, dict]) -> list[dict]:
    """One entry per written answer, for manual questions on Gradescope: 0 automatic points, the student's
    text escaped inside <pre> (never Markdown, which would pass HTML and images to graders' browsers),
    visible to graders only."""
    entries = []
    for item in checks.written:
        found = answers.get(item.question, {"text": "", "in_prompt": False})
        text = plain_lines(found["text"]) or "(no answer)"
        note = "<p><b>Typed into the question's prompt cell.</b></p>" if found["in_prompt"] else ""
        clipped = html.escape(text[:MAX_WRITTEN]) + (" [… cut]" if len(text) > MAX_WRITTEN else "")
        entries.append({"name": f"{item.question}_written: {item.title} (written, graded by hand)", "score": 0.0,
                        "max_score": 0.0, "output": f"{note}<pre>{clipped}</pre>", "output_format": "html",
                        "visibility": "hidden", "tags": ["written"]})
    return entries


def unit_name(test: dict) -> str:
    """The unit a results entry belongs to ("c3: Scaled dot-product ..." -> "c3")."""
    return test["name"].split(":")[0]


class Outcome(str, Enum):
    """Whether a grade exists, and who is at fault when it is 0 for want of grading (``extra_data["outcome"]``).

    Set where the failure happens, read by the gradebook: never found by searching a status message."""

    GRADED = "graded"  # the notebook ran and was scored (also partly: a cell that timed out)
    STUDENT = "student"  # the submission could not be graded by its own doing (corrupt, another assignment,
    # no notebook, ran out of time or bounds alone): 0 stands, as on Gradescope
    NOT_GRADED = "not_graded"  # the grader, its kernel's start or its worker failed: no grade exists, none is made up


def outcome(results: dict) -> Outcome:
    """A results file's outcome; one written before the field existed counts as graded (its score stood then)."""
    extra = results.get("extra_data")
    try:
        return Outcome(extra.get("outcome", Outcome.GRADED.value) if isinstance(extra, dict) else Outcome.GRADED)
    except ValueError:
        return Outcome.NOT_GRADED  # a value this version does not know: no grade is assumed


def failed_results(checks: Checks, reason: str, fault: Outcome, status: str | None = None) -> dict:
    """Score 0 everywhere, with the reason, for a submission that could not be run; ``fault`` says whether
    that 0 is the student's (STUDENT) or no grade at all (NOT_GRADED), whose status then says "not graded"."""
    reason = cap(reason, 1000)
    tests = [
        {"name": f"{u.name}: {u.title}", "score": 0.0, "max_score": max_points(u, False),
         "output": f"Not graded: {reason}", "output_format": TEXT, "visibility": checks.visibility}
        for u in checks.units
    ]
    default = f"not graded: {reason}" if fault is Outcome.NOT_GRADED else f"error: {reason}"
    return {"score": 0.0, "output": f"Your submission could not be graded: {reason}", "output_format": TEXT, "tests": tests,
            "extra_data": {"status": cap(status, 1000) if status else default, "outcome": fault.value}}


def plain_results(results: dict) -> dict:
    """Results with the text rule applied to every string, as the last step before they are written: one
    line everywhere but the results' own output and each test's output, whose lines are the grader's (each
    made safe where it was written; text.py). What reaches a results file can hold no control or invisible
    character and no lone surrogate, wherever a student's text was put on the way."""
    found = {k: _plain(v) for k, v in _plain_keys(results).items()}
    if isinstance(results.get("output"), str):
        found["output"] = plain_lines(results["output"])
    if isinstance(results.get("tests"), list):
        found["tests"] = [{**_plain(t), **({"output": plain_lines(t["output"])} if isinstance(t.get("output"), str) else {})}
                          if isinstance(t, dict) else _plain(t) for t in results["tests"]]
    return found


def _plain_keys(value: dict) -> dict:
    return {plain_text(str(k)): v for k, v in value.items()}


def _plain(value):
    """Every string of a JSON value, keys too, as one line of plain text."""
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in _plain_keys(value).items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def write_results(path: Path, results: dict) -> None:
    write_private(path, json.dumps(plain_results(results), indent=2, ensure_ascii=False).encode())


def results_name(submission_path: str | Path) -> str:
    path = Path(submission_path)
    return (path.stem if path.is_file() else path.name) + ".json"
