"""Gradescope's results format (results.json): one typed object (``Results``, its ``TestResult`` entries and
typed readers of what extra_data holds that the grader reads), entries, the score-0 result, and writing it
atomically. Student-originated text is capped here.

The grader makes and reads results as ``Results``; ``to_json()`` is results.json's dict (what is written, sent
by a grading process and returned by ``grade()``), ``Results.load`` / ``Results.read`` check a dict or a file
(never trusted) and keep every key they do not know, so an older grader's file loads and nothing is lost."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from .checks_json import Checks, QuestionUnit, Unit
from .inkernel.errors import GraderError
from .inkernel.text import cap, plain_lines, plain_text
from .owned import write_private

# extra_data keys that tie a results file to what it graded: two different hashes, so two names. (The seed of a
# grading's probe inputs is a third, the submission's code cells with the seed key: scoring/inputs.py seed_for.)
CONTENT_HASH = "content_hash"  # a class's batch: its files' names and bytes (discover.content_hash); skips work done
FILE_HASH = "file_hash"  # one notebook graded alone: its bytes (a folder: its path); whose results OUT/results/<stem>.json holds
LEGACY_HASH = "submission_hash"  # what both were written as before they had names of their own: still read
GRADER_VERSION = "attn_ref_version"  # extra_data: the attn_ref.__version__ that graded it, beside autograder_version


def recorded_hash(extra: dict, key: str):
    """The hash ``key`` names in a results file's extra_data, or the one an older grader wrote."""
    return extra.get(key, extra.get(LEGACY_HASH))


MAX_OUTPUT_TEXT = 8000  # one test's output
MAX_NOTES = 4000  # the results' own output


# Gradescope shows these outputs as plain text: student text in them (an exception's message, a class's
# name) is never read as HTML or Markdown. Written answers are the one html entry, escaped inside <pre>.
TEXT = "text"


class Outcome(str, Enum):
    """Whether a grade exists, and who is at fault when it is 0 for want of grading (``extra_data["outcome"]``).

    Set where the failure happens, read by the gradebook: never found by searching a status message."""

    GRADED = "graded"  # the notebook ran and was scored (also partly: a cell that timed out)
    STUDENT = "student"  # the submission could not be graded by its own doing (corrupt, another assignment,
    # no notebook, ran out of time or bounds alone): 0 stands, as on Gradescope
    NOT_GRADED = "not_graded"  # the grader, its kernel's start or its worker failed: no grade exists, none is made up


def outcome(results: dict | Results) -> Outcome:
    """A results file's outcome; one written before the field existed counts as graded (its score stood then)."""
    extra = results.extra if isinstance(results, Results) else results.get("extra_data")
    try:
        return Outcome(extra.get("outcome", Outcome.GRADED.value) if isinstance(extra, dict) else Outcome.GRADED)
    except ValueError:
        return Outcome.NOT_GRADED  # a value this version does not know: no grade is assumed


class ResultsError(GraderError, ValueError):
    """A results file (or what a grading process sent) that is not results: says what is wrong, and where."""


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResultsError(f"{where} is not a number: {type(value).__name__}")
    return value


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise ResultsError(f"{where} is not text: {type(value).__name__}")
    return value


TEST_KEYS = ("name", "score", "max_score", "output", "output_format", "visibility", "tags")


@dataclass
class TestResult:
    """One Gradescope test entry (``tests[i]`` of results.json). ``other``: keys this version does not know,
    kept as they were read so that writing it back loses nothing."""

    __test__ = False  # not a pytest class

    name: str
    score: float
    max_score: float
    output: str = ""
    output_format: str = TEXT
    visibility: str = "visible"
    tags: list[str] | None = None  # written only where there are some (the written answers' entries)
    other: dict = field(default_factory=dict)

    @property
    def unit(self) -> str:
        """The unit the entry belongs to ("c3: Scaled dot-product ..." -> "c3")."""
        return self.name.split(":")[0]

    @property
    def full(self) -> bool:
        return self.score >= self.max_score

    def to_json(self) -> dict:
        found = {"name": self.name, "score": self.score, "max_score": self.max_score, "output": self.output,
                 "output_format": self.output_format, "visibility": self.visibility}
        if self.tags is not None:
            found["tags"] = list(self.tags)
        return {**found, **self.other}

    @classmethod
    def load(cls, data, where: str = "a test") -> TestResult:
        """A test entry read from JSON, checked: a missing score or max_score (an older or a hand-made file)
        counts 0, as the gradebook always read it; a wrong type is an error naming the entry and the key."""
        if isinstance(data, TestResult):
            return data
        if not isinstance(data, dict):
            raise ResultsError(f"{where} is not an object: {type(data).__name__}")
        name = _text(data.get("name", ""), f"{where}'s name")
        where = f"test {name!r}" if name else where
        tags = data.get("tags")
        if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
            raise ResultsError(f"{where}'s tags are not a list of text")
        return cls(name, _number(data.get("score", 0.0), f"{where}'s score"),
                   _number(data.get("max_score", 0.0), f"{where}'s max_score"),
                   _text(data.get("output", ""), f"{where}'s output"),
                   _text(data.get("output_format", TEXT), f"{where}'s output_format"),
                   _text(data.get("visibility", "visible"), f"{where}'s visibility"), tags,
                   {k: v for k, v in data.items() if k not in TEST_KEYS})


class Unnamed(str, Enum):
    """Why a failed line has no mistake a mutant could name (``cause`` in a line's evidence): the class's report
    counts these apart from the lines no known mistake explains (classroom/mistakes.py)."""

    NOT_WRITTEN = "not_written"  # the function returned None, or the answer is still `...`
    CELL_ERROR = "cell_error"  # the function or answer was not defined (its cell raised or never ran), or the call did not finish
    STAND_IN = "stand_in"  # failed beside a correct stand-in: what the kernel said is withheld (withheld.py)


@dataclass(frozen=True)
class ProbeEvidence:
    """One line of ``extra_data["probes"]`` (functions.py) or ``extra_data["answers"]`` (questions.py): the task
    or question, the line's label, whether it passed, the known mistake a failed one was recognised as, and why
    a failed one has none to name (``cause``)."""

    task: str | None
    probe: str | None
    passed: bool | None
    mistake: str | None
    cause: Unnamed | None = None

    @property
    def not_written(self) -> bool:
        return self.cause is Unnamed.NOT_WRITTEN

    @classmethod
    def load(cls, data) -> ProbeEvidence | None:
        """The evidence of one line, or None where it is not an object; a value of the wrong type reads as None."""
        if not isinstance(data, dict):
            return None

        def typed(key, kind):
            value = data.get(key)
            return value if isinstance(value, kind) else None

        cause = typed("cause", str)
        cause = Unnamed(cause) if cause in {u.value for u in Unnamed} else None
        if cause is None and typed("not_written", bool) is True:  # how an older grader recorded it
            cause = Unnamed.NOT_WRITTEN
        return cls(typed("task", str), typed("probe", str), typed("passed", bool), typed("mistake", str), cause)


RESULTS_KEYS = ("score", "output", "output_format", "tests", "extra_data", "execution_time")


@dataclass
class Results:
    """Gradescope's results.json, typed: the score, the results' own output, the tests and extra_data.

    ``extra`` is extra_data as it is written (what the grader records grows, and files of older graders hold
    keys this one does not write: all are kept); the accessors below read what the grader reads of it, typed
    and with an older file's defaults. ``other``: top-level keys this version does not know, kept."""

    score: float
    tests: list[TestResult] = field(default_factory=list)
    output: str = ""
    output_format: str = TEXT
    extra: dict = field(default_factory=dict)
    execution_time: float | None = None  # written once set (the grading process, or its supervisor)
    other: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The results as results.json holds them (plain_results is applied where they are written)."""
        found = {"score": self.score, "output": self.output, "output_format": self.output_format,
                 "tests": [t.to_json() for t in self.tests], "extra_data": self.extra}
        if self.execution_time is not None:
            found["execution_time"] = self.execution_time
        return {**found, **self.other}

    @classmethod
    def load(cls, data, where: str = "the results", *, with_extra: bool = False) -> Results:
        """Results read from JSON (a file, or what a grading process sent), checked: an error names what is
        wrong. A file of an older grader loads: fields it lacks take their defaults (no tests, empty
        extra_data), its legacy keys are kept and read (recorded_hash, outcome). ``with_extra``: results
        without extra_data are an error (nothing ties them to what they graded)."""
        if isinstance(data, Results):
            return data
        if not isinstance(data, dict):
            raise ResultsError(f"{where} are not an object: {type(data).__name__}")
        if with_extra and "extra_data" not in data:
            raise ResultsError(f"{where} have no extra_data")
        tests = data.get("tests", [])
        if not isinstance(tests, list):
            raise ResultsError(f"{where}' tests are not a list: {type(tests).__name__}")
        extra = data.get("extra_data", {})
        if not isinstance(extra, dict):
            raise ResultsError(f"{where}' extra_data is not an object: {type(extra).__name__}")
        time = data.get("execution_time")
        return cls(_number(data.get("score", 0.0), f"{where}' score"),
                   [TestResult.load(t, f"test {i + 1} of {where}") for i, t in enumerate(tests)],
                   _text(data.get("output", ""), f"{where}' output"),
                   _text(data.get("output_format", TEXT), f"{where}' output_format"), extra,
                   None if time is None else _number(time, f"{where}' execution_time"),
                   {k: v for k, v in data.items() if k not in RESULTS_KEYS})

    @classmethod
    def read(cls, path: Path, *, with_extra: bool = True) -> Results:
        """A results file: OSError where it cannot be read, ResultsError (a ValueError) where it is not results
        (one without extra_data, unless ``with_extra`` is False, is not tied to any submission: not results)."""
        try:
            data = json.loads(Path(path).read_text())
        except ValueError as err:
            raise ResultsError(f"{path} is not JSON: {err}") from None
        return cls.load(data, str(path), with_extra=with_extra)

    # what extra_data holds that the grader reads
    @property
    def outcome(self) -> Outcome:
        """Whether a grade exists (results.Outcome); an older file without the field counts as graded."""
        return outcome(self)

    @property
    def has_grade(self) -> bool:
        return self.outcome is not Outcome.NOT_GRADED

    @property
    def status(self) -> str | None:
        """The status line (e.g. "ok", "timeout", "error: ..."), None where none is recorded."""
        value = self.extra.get("status")
        return None if value is None else str(value)

    @property
    def timed_out(self) -> bool:
        """Whether its grading recorded a timeout (a cell, a call or the budget)."""
        return self.extra.get("timed_out") is True

    def recorded_hash(self, key: str):
        """The hash ``key`` (CONTENT_HASH or FILE_HASH) names, or the legacy one an older grader wrote."""
        return recorded_hash(self.extra, key)

    @property
    def submission(self) -> str | None:
        """The key of the batch's submission it was written for (None: one graded alone, or an older file)."""
        return self.extra.get("submission")

    @property
    def autograder_version(self) -> str | None:
        """The version of the autograder that graded it: the hash of what in its zip decides a score."""
        return self.extra.get("autograder_version")

    @property
    def grader_version(self) -> str | None:
        """The attn-ref version that graded it (None: an older grader's results, which did not record it)."""
        value = self.extra.get(GRADER_VERSION)
        return value if isinstance(value, str) and value else None

    @property
    def variant(self):
        """The variant of a question with parameters that was graded (scoring/whose_variant.py), or None."""
        return self.extra.get("variant")

    @property
    def probes(self) -> list[ProbeEvidence]:
        """The per-probe evidence (functions.py), the lines that are objects; none where none is recorded."""
        return self._evidence("probes")

    @property
    def answers(self) -> list[ProbeEvidence]:
        """The per-answer evidence of the questions (questions.py); none where none is recorded."""
        return self._evidence("answers")

    def _evidence(self, key: str) -> list[ProbeEvidence]:
        found = self.extra.get(key)
        lines = (ProbeEvidence.load(p) for p in (found if isinstance(found, list) else ()))
        return [p for p in lines if p is not None]

    @property
    def integrity_flags(self) -> list[str]:
        return [str(f) for f in self.extra.get("integrity_flags", [])]

    @property
    def forbidden_calls(self) -> dict:
        """{unit: the forbidden names its function called}."""
        return self.extra.get("forbidden_calls") or {}

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)


def cap_lines(text: str, limit: int) -> str:
    """The grader's own lines (each already made safe by whoever put student text in it), bounded."""
    return plain_lines(text[:limit])


def max_points(unit: Unit, cuda: bool) -> float:
    if isinstance(unit, QuestionUnit):
        return sum(a.points for a in unit.answers)
    return sum(p.points for p in unit.probes if cuda or p.device != "cuda")


def entry(unit: Unit, lines: list[tuple[bool, str, float, str]], visibility: str, cuda: bool = False) -> TestResult:
    """One Gradescope test entry; lines are (passed, label, points, message: why it failed, or a note).

    Each line is the grader's: a message (which may quote the student: an exception's text, a name) is
    made one line, so no student text can begin a line of its own."""
    output = "\n".join(
        f"{'✓' if ok else '✗'} {plain_text(label)} ({points if ok else 0:g}/{points:g})" + (f": {plain_text(msg)}" if msg else "")
        for ok, label, points, msg in lines
    )
    return TestResult(f"{unit.name}: {unit.title}", round(sum(points for ok, _, points, _ in lines if ok), 6),
                      max_points(unit, cuda), cap_lines(output, MAX_OUTPUT_TEXT), TEXT, visibility)


MAX_WRITTEN = 5000  # characters of a written answer shown to graders


def written_entries(checks: Checks, answers: dict[str, dict]) -> list[TestResult]:
    """One entry per written answer, for manual questions on Gradescope: 0 automatic points, the student's
    text escaped inside <pre> (never Markdown, which would pass HTML and images to graders' browsers),
    visible to graders only."""
    entries = []
    for item in checks.written:
        found = answers.get(item.question, {"text": "", "in_prompt": False})
        text = plain_lines(found["text"]) or "(no answer)"
        note = "<p><b>Typed into the question's prompt cell.</b></p>" if found["in_prompt"] else ""
        clipped = html.escape(text[:MAX_WRITTEN]) + (" [… cut]" if len(text) > MAX_WRITTEN else "")
        entries.append(TestResult(f"{item.question}_written: {item.title} (written, graded by hand)", 0.0, 0.0,
                                  f"{note}<pre>{clipped}</pre>", "html", "hidden", ["written"]))
    return entries


def unit_name(test: dict | TestResult) -> str:
    """The unit a results entry belongs to ("c3: Scaled dot-product ..." -> "c3")."""
    return (test if isinstance(test, TestResult) else TestResult.load(test)).unit


def failed_results(checks: Checks, reason: str, fault: Outcome, status: str | None = None) -> Results:
    """Score 0 everywhere, with the reason, for a submission that could not be run; ``fault`` says whether
    that 0 is the student's (STUDENT) or no grade at all (NOT_GRADED), whose status then says "not graded"."""
    reason = cap(reason, 1000)
    tests = [TestResult(f"{u.name}: {u.title}", 0.0, max_points(u, False), f"Not graded: {reason}", TEXT, checks.visibility)
             for u in checks.units]
    default = f"not graded: {reason}" if fault is Outcome.NOT_GRADED else f"error: {reason}"
    return Results(0.0, tests, f"Your submission could not be graded: {reason}", TEXT,
                   {"status": cap(status, 1000) if status else default, "outcome": fault.value})


def plain_results(results: dict | Results) -> dict:
    """Results with the text rule applied to every string, as the last step before they are written: one
    line everywhere but the results' own output and each test's output, whose lines are the grader's (each
    made safe where it was written; text.py). What reaches a results file can hold no control or invisible
    character and no lone surrogate, wherever a student's text was put on the way."""
    if isinstance(results, Results):
        results = results.to_json()
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


def write_results(path: Path, results: dict | Results) -> None:
    write_private(path, json.dumps(plain_results(results), indent=2, ensure_ascii=False).encode())


def results_name(submission_path: str | Path) -> str:
    path = Path(submission_path)
    return (path.stem if path.is_file() else path.name) + ".json"
