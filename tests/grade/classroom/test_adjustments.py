"""TA adjustments (adjustments.csv) that survive a regrade, and the grader's version beside the zip's hash.

The gradebook is written here from results files made by hand (no kernel: fast, and every score known);
the end-to-end test grades a practice class with the real autograder, then a changed one."""

from __future__ import annotations

import csv
import html
from pathlib import Path

import pytest
from hostile import assert_in_custody

from attn_ref.grade.checks_json import Answer, Checks, FunctionUnit, Probe, QuestionUnit, WrittenPart
from attn_ref.grade.classroom.adjustments import FILE, Problem
from attn_ref.grade.classroom.batch import WRITTEN_HERE
from attn_ref.grade.classroom.discover import Submission
from attn_ref.grade.classroom.gradebook import summary_lines, write_gradebook
from attn_ref.grade.owned import private_folder, tighten
from attn_ref.grade.results import Results, write_results

MASKED = "fully masked rows give zeros"
F32 = "float32 in, float32 out"
ADA = {"name": "Ada Lovelace", "sid": "00123", "email": "ada@uni.edu"}
ZOE = {"name": "Zoë Ångström", "sid": "00456", "email": "zoe@uni.edu"}
ALAN = {"name": "Alan Turing", "sid": "=1+1", "email": "alan@uni.edu"}  # a SID a spreadsheet would run
GRACE = {"name": "Grace Hopper", "sid": "A3", "email": "grace@uni.edu"}
HEADER = "student,question,line,points,score,reason,who,when\n"


def _checks(version: str, masked: str = MASKED) -> Checks:
    c3 = FunctionUnit("c3", "scaled dot-product", probes=(Probe(masked, 2.0), Probe(F32, 1.0)))
    q4 = QuestionUnit("q4", "a ratio", answers=(Answer("q4_ratio", "float", 0.5, 2.0),))
    return Checks("lab", (c3, q4), (WrittenPart("q4", points=1.0),), version=version)


def _results(out: Path, key: str, scores: dict[str, float] | None, version: str, grader: str | None = "0.1.0") -> None:
    """results/<key>.json as a batch writes it (None: the grader failed, no grade)."""
    extra = {"submission": key, "status": "ok" if scores else "not graded: the grader failed", "autograder_version": version,
             "outcome": "graded" if scores else "not_graded"}
    if grader:
        extra["attn_ref_version"] = grader
    tops = {"c3": 3.0, "q4": 2.0}
    tests = [{"name": f"{u}: x", "score": (scores or {}).get(u, 0.0), "max_score": top} for u, top in tops.items()]
    write_results(private_folder(out / "results") / f"{key}.json", {"score": 0, "tests": tests, "extra_data": extra})


def _class(tmp_path: Path) -> list[Submission]:
    return [Submission("s1", tmp_path / "s1.ipynb", [ADA, ZOE]), Submission("s2", tmp_path / "s2.ipynb", [ALAN]),
            Submission("s3", tmp_path / "s3.ipynb", [GRACE])]


def _grade(out: Path, subs, version: str, c3_of_s1: float = 1.0, masked: str = MASKED, canvas: dict | None = None):
    """The class graded with the autograder ``version``: results, then the gradebook, as a batch does."""
    _results(out, "s1", {"c3": c3_of_s1, "q4": 2.0}, version)
    _results(out, "s2", {"c3": 3.0, "q4": 0.0}, version, grader=None)  # an older grader's results: no version
    _results(out, "s3", None, version)
    return write_gradebook(out, subs, _checks(version, masked), canvas)


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def _roster(tmp_path: Path) -> Path:
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Lab 3.1 (55501)\n    Points Possible,,,,,6\n"
                      '"Lovelace, Ada",501,00123,ada@uni.edu,S1,\n"Ångström, Zoë",502,00456,zoe@uni.edu,S1,\n'
                      '"Turing, Alan",503,T9,alan@uni.edu,S1,\n"Hopper, Grace",504,A3,grace@uni.edu,S1,\n', encoding="utf-8")
    return roster


def _canvas(out: Path) -> dict[str, str]:
    with open(out / "canvas.csv", newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 3.1 (55501)"]  # its one column
    return {r[0]: r[5] for r in rows[2:]}


TWO_ADJUSTMENTS = (HEADER
                   + f"123,c3,{MASKED},+2,,regrade request 14: the mask is right,sam,2026-03-02\n"  # Ada's SID, zeros dropped
                   + "ALAN@uni.edu,q4,,,1.5,\"=HYPERLINK(\"\"http://evil/\"\",\"\"x\"\") <script>alert(1)</script>\",kim,\n"
                   + "A3,c3,,1,,late pass,sam,\n")  # Grace's submission has no grade: the row waits


def test_the_round_trip_adjustments_survive_a_changed_zip(tmp_path):
    out, subs = tmp_path / "graded", _class(tmp_path)
    canvas = {"roster": _roster(tmp_path), "assignment": "Lab 3.1 (55501)"}
    book = _grade(out, subs, "v1", canvas=canvas)
    assert (out / FILE).read_text(encoding="utf-8-sig") == HEADER  # the template, for the TA to fill
    assert (out / FILE).stat().st_mode & 0o077 == 0
    assert book.adjustments.applied == [] and _canvas(out)["Lovelace, Ada"] == "3"

    (out / FILE).write_text(TWO_ADJUSTMENTS, encoding="utf-8")
    book = _grade(out, subs, "v1", canvas=canvas)
    rows = {r["name"]: r for r in _csv(out / "grades.csv")}
    both = {n: (rows[n]["total"], rows[n]["adjusted total"]) for n in rows}
    assert both == {"Ada Lovelace": ("3", "5"), "Zoë Ångström": ("3", "5"), "Alan Turing": ("3", "4.5"), "Grace Hopper": ("", "")}
    assert rows["Ada Lovelace"]["c3"] == "1"  # the question's column stays automatic; the adjustments cell says what changed
    assert rows["Ada Lovelace"]["adjustments"] == "c3 1 → 3 (row 2, sam)"
    assert rows["Grace Hopper"]["adjustments"] == "row 4 not applied: no grade"
    assert _canvas(out) == {"Lovelace, Ada": "5", "Ångström, Zoë": "5", "Turing, Alan": "4.5", "Hopper, Grace": ""}
    assert [n.problem for n in book.adjustments.not_applied] == [Problem.NO_GRADE]  # waits, and holds nothing back
    page = (out / "report.html").read_text()
    assert "regrade request 14: the mask is right" in page and "1 → <b>3</b>" in page and "<script>alert" not in page

    # the zip changes (a new version, stricter: Ada's c3 is 0 now; the line renamed) and the class is regraded
    (out / "canvas.csv").write_text("stale")
    book = _grade(out, subs, "v2", c3_of_s1=0.0, masked="fully masked rows give zero outputs", canvas=canvas)
    (orphan, waiting) = book.adjustments.not_applied
    assert orphan.problem is Problem.NO_QUESTION and orphan.row.number == 2 and MASKED in orphan.why
    assert [(a.row.number, a.before, a.after) for a in book.adjustments.applied] == [(3, 0.0, 1.5)]  # still applied
    lines = summary_lines(book)
    assert any(line.startswith(f"warning: {FILE} row 2 (123, c3 (line '{MASKED}'): points +2): c3 has no line") for line in lines)
    assert any("the run exits 4 and writes no canvas.csv" in line for line in lines)
    assert not (out / "canvas.csv").exists()  # an import would drop the change a TA granted: no file, not a stale one
    rows = {r["name"]: r for r in _csv(out / "grades.csv")}
    assert (rows["Ada Lovelace"]["total"], rows["Ada Lovelace"]["adjusted total"]) == ("2", "2")
    assert rows["Ada Lovelace"]["adjustments"] == "row 2 not applied: no such question or line"
    assert "Not applied" in (out / "report.html").read_text() and html.escape(repr(MASKED)) in (out / "report.html").read_text()

    # the TA points the row at the renamed line: applied again, on the new automatic score, and canvas.csv is back
    (out / FILE).write_text(TWO_ADJUSTMENTS.replace(MASKED, "Fully masked rows give zero outputs "), encoding="utf-8")
    book = _grade(out, subs, "v2", c3_of_s1=0.0, masked="fully masked rows give zero outputs", canvas=canvas)
    assert not book.adjustments.holds_back_import
    assert _canvas(out)["Lovelace, Ada"] == "4" and _canvas(out)["Turing, Alan"] == "4.5"
    # a regrade that gives those points itself: the row would take c3 past its points, so it is listed, not applied
    book = _grade(out, subs, "v3", c3_of_s1=2.0, masked="fully masked rows give zero outputs", canvas=canvas)
    assert book.adjustments.not_applied[0].problem is Problem.OUT_OF_RANGE and not (out / "canvas.csv").exists()
    assert "c3 would be 4 of 3 (it is 2 now): a regrade may give these points already" in book.adjustments.not_applied[0].why


def test_the_version_that_graded_each_submission_is_recorded_beside_the_zips_hash(tmp_path):
    out, subs = tmp_path / "graded", _class(tmp_path)
    book = _grade(out, subs, "f00d" * 16)
    rows = {r["name"]: r for r in _csv(out / "grades.csv")}
    assert (rows["Ada Lovelace"]["grader"], rows["Ada Lovelace"]["autograder"]) == ("attn-ref 0.1.0", "f00d" * 16)
    assert rows["Alan Turing"]["grader"].startswith("attn-ref (version not recorded")  # an older grader's results load
    lines = summary_lines(book)
    assert any(line.startswith("graded by 2 graders") and "attn-ref 0.1.0 with autograder f00df00df00d (2 submissions)" in line
               for line in lines)
    assert f"attn-ref 0.1.0 with autograder {'f00d' * 16} (2 submissions)" in (out / "report.html").read_text()


BAD_ROWS = {  # a row -> what its error must say
    "123,c3,,1.5.0,,r,sam": "points '1.5.0' is not a number",
    "123,c3,,\"1,5\",,r,sam": "a decimal point, not a comma",
    "123,c3,,1,2,r,sam": "both points (a change) and score (a new score)",
    "123,c3,,,,r,sam": "neither points",
    "123,c3,,1,,,sam": "no reason",
    "123,c9,,1,,r,sam": "no question 'c9' in this autograder (its questions: c3, q4, q4_written)",
    f"123,c3,{MASKED}x,1,,r,sam": "c3 has no line 'fully masked rows give zerosx'",
    "123,c3,,,4,r,sam": "score 4 is not from 0 to c3's 3 points",
    f'123,c3,"{F32}",+2,,r,sam': "points +2 is more than its line's 1 points",
    f'123,c3,"{F32}",,1,r,sam': "score is the question's new score, not a line's",
    "99999,c3,,1,,r,sam": "no student of this class has the SID or email '99999'",
    "00456,q4,,+1,,r,sam": "q4 would be 3 of 2 (it is 2 now)",
    "zoe@uni.edu,q4_written,,,1,r,sam": "repeats row 15 for the same submission",  # Zoë shares Ada's submission
    "nan,c3,,inf,,r,sam": "not a finite number",
    "123,c3,,,1,5,regrade,sam,2026-03-04": "9 cells, but the header has 8",  # score 1,5: every cell after it shifted
}


def test_each_bad_row_is_named_with_what_is_wrong_and_the_good_rows_still_apply(tmp_path):
    out, subs = tmp_path / "graded", _class(tmp_path)
    good = "ada@uni.edu,q4_written,,,1,typed late,kim"
    private_folder(out)
    (out / FILE).write_text(HEADER + "\n".join(list(BAD_ROWS)[:12] + ["", good] + list(BAD_ROWS)[12:]) + "\n", encoding="utf-8")
    book = _grade(out, subs, "v1")
    found = {n.row.number: n for n in book.adjustments.not_applied}
    for number, (row, says) in zip([*range(2, 14), 16, 17, 18], BAD_ROWS.items(), strict=True):
        assert says in found[number].message(), (row, found[number].message())
        assert found[number].message().startswith(f"{FILE} row {number} (")
    assert [(a.row.number, a.question, a.after) for a in book.adjustments.applied] == [(15, "q4_written", 1.0)]
    assert {r["name"]: r["adjusted total"] for r in _csv(out / "grades.csv")}["Zoë Ångström"] == "4"
    assert book.adjustments.holds_back_import


def test_a_file_that_is_not_an_adjustments_sheet_applies_nothing_and_says_why(tmp_path):
    out, subs = tmp_path / "graded", _class(tmp_path)
    private_folder(out)
    (out / FILE).write_text("sid,question,points\n123,c3,1\n", encoding="utf-8")
    (problem,) = _grade(out, subs, "v1").adjustments.not_applied
    assert problem.problem is Problem.FILE and "no column student, reason, who, score" in problem.message()
    (out / FILE).write_bytes(HEADER.encode() + "123,c3,,1,,caf\xe9 in Latin-1,sam\n".encode("latin-1"))
    (problem,) = _grade(out, subs, "v1").adjustments.not_applied
    assert problem.problem is Problem.FILE and "save it as CSV in UTF-8" in problem.message()


def test_adjustments_are_safe_in_a_spreadsheet_a_page_and_a_terminal(tmp_path):
    """A SID that is a formula, typed back as grades.csv shows it ('=1+1); a TA's name that is one; terminal
    escapes and HTML in the cells: every CSV cell a spreadsheet would run is text, the page escapes, the
    console shows no control character."""
    out, subs = tmp_path / "graded", _class(tmp_path)
    private_folder(out)
    (out / FILE).write_text(HEADER + "'=1+1,c3,,-1,,\"<img src=x onerror=alert(1)>\x1b[2J\",=cmd|' /C calc'!A0,@now\n"
                            "=1+1,q4,,+0.5,,second,kim\n", encoding="utf-8")
    book = _grade(out, subs, "v1")
    assert [(a.submission, a.question, a.after) for a in book.adjustments.applied] == [("s2", "c3", 2.0), ("s2", "q4", 0.5)]
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        cells = [c for row in csv.reader(f) for c in row]
    assert "'=1+1" in cells and "c3 3 → 2 (row 2, =cmd|' /C calc'!A0); q4 0 → 0.5 (row 3, kim)" in cells
    page = (out / "report.html").read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;?[2J" in page
    assert "=cmd|&#x27; /C calc&#x27;!A0" in page  # shown as typed: a page runs no formula
    # every file owner-only (the TA's adjustments.csv too, as a batch leaves it); no CSV cell a spreadsheet would run;
    # no hidden character in a file the grader wrote (the TA's own file holds what they typed) or on the console
    tighten(out, WRITTEN_HERE)
    assert (out / FILE).stat().st_mode & 0o777 == 0o600
    (out / FILE).unlink()
    assert_in_custody(out, "\n".join(summary_lines(book)))


@pytest.mark.parametrize("typed", ["ada@uni.edu", "ADA@UNI.EDU", "00123", "123"])
def test_a_student_is_named_by_sid_or_email(tmp_path, typed):
    out, subs = tmp_path / "graded", _class(tmp_path)
    private_folder(out)
    (out / FILE).write_text(HEADER + f"{typed},c3,,+1,,r,sam\n", encoding="utf-8")
    (applied,) = _grade(out, subs, "v1").adjustments.applied
    assert applied.submission == "s1" and (applied.before, applied.after) == (1.0, 2.0)


@pytest.mark.parametrize("typed", ["0000123", "0456"])
def test_a_sid_typed_with_leading_zeros_is_that_sid_alone(tmp_path, typed):
    """00789 is never another student's 789 (a student could take a classmate's SID without its zeros); only a SID
    typed without them may be a spreadsheet's display of one with them (123 for 00123)."""
    out, subs = tmp_path / "graded", _class(tmp_path)
    subs.append(Submission("s4", tmp_path / "s4.ipynb", [{"name": "Mal", "sid": "456", "email": "mal@uni.edu"}]))
    private_folder(out)
    _results(out, "s4", {"c3": 1.0, "q4": 0.0}, "v1")
    (out / FILE).write_text(HEADER + f"{typed},c3,,+1,,r,sam\n", encoding="utf-8")
    book = _grade(out, subs, "v1")
    assert not book.adjustments.applied
    (refused,) = book.adjustments.not_applied
    assert refused.problem is Problem.NO_STUDENT


@pytest.mark.parametrize("typed", ["ada", "ada.ipynb", "'-rf_q", "-rf_q"])
def test_a_plain_folders_submission_is_named_as_grades_csv_names_it(tmp_path, typed):
    """A class with no export has no SIDs: a row names a file by grades.csv's name column (what a TA reads first) or
    its submission column, with or without the ' a spreadsheet keeps; a name no file has says so in those words."""
    out = tmp_path / "graded"
    subs = [Submission("ada", tmp_path / "ada.ipynb"), Submission("-rf_q", tmp_path / '-rf "q.ipynb'),
            Submission("s3", tmp_path / "s3.ipynb")]
    private_folder(out)
    (out / FILE).write_text(HEADER + f"{typed},c3,,+1,,r,sam\nbob,c3,,+1,,r,sam\n", encoding="utf-8")
    _results(out, "ada", {"c3": 1.0}, "v1")
    _results(out, "-rf_q", {"c3": 1.0}, "v1")
    _results(out, "s3", {"c3": 1.0}, "v1")
    book = write_gradebook(out, subs, _checks("v1"))
    (applied,) = book.adjustments.applied
    assert applied.submission == ("ada" if "ada" in typed else "-rf_q") and applied.after == 2.0
    (missing,) = book.adjustments.not_applied
    assert missing.problem is Problem.NO_STUDENT and "no submission of this class is named 'bob'" in missing.message()
    assert "grades.csv's name or submission column" in missing.message() and "SID or email 'bob'" not in missing.message()


# ---- end to end: a practice class graded, adjusted, regraded with a changed zip, imported -----------------

def _changed_zip(original: Path, to: Path) -> str:
    """A copy of the autograder whose q11 line q11_bytes_bf16 is renamed (so graded 0, and a row naming it has
    no line to wait on) and whose version is new: every submission is regraded. Returns that version."""
    import json
    import zipfile

    with zipfile.ZipFile(original) as source, zipfile.ZipFile(to, "w") as changed:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "checks.json":
                checks = json.loads(data)
                checks["version"] = "ab" * 32
                (q11,) = [u for u in checks["units"] if u["name"] == "q11"]
                (line,) = [a for a in q11["answers"] if a["name"] == "q11_bytes_bf16"]
                line["name"] = "q11_bytes_bfloat16"
                data = json.dumps(checks).encode()
            changed.writestr(item, data)
    return "ab" * 32


def _grade_cli(folder: Path, autograder: Path, out: Path, roster: Path):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "attn_ref", "grade", str(folder), "--autograder", str(autograder), "--out",
                           str(out), "--jobs", "2", "--cell-timeout", "20", "--call-timeout", "8", "--export", "canvas",
                           "--canvas-roster", str(roster), "--canvas-assignment", "Practice 3.1 (222)"],
                          capture_output=True, text=True, timeout=900)


def test_a_class_regraded_with_a_changed_zip_keeps_its_adjustments_and_imports_them(release, tmp_path):
    import nbformat
    import yaml
    from conftest import signed_in

    import attn_ref

    built, _ = release
    export = tmp_path / "export"
    solution = nbformat.read(str(built / "solutions/practice/practice.ipynb"), as_version=4)
    blank = nbformat.read(str(built / "assignments/practice/practice.ipynb"), as_version=4)
    people = {"submission_1": ("Ada Lovelace", "00123", "ada@uni.edu", signed_in(solution, "ada@uni.edu")),
              "submission_2": ("Alan Turing", "A2", "alan@uni.edu", blank)}
    metadata = {}
    for key, (name, sid, email, nb) in people.items():
        (export / key).mkdir(parents=True)
        nbformat.write(nb, str(export / key / "practice.ipynb"))
        metadata[key] = {":submitters": [{":name": name, ":sid": sid, ":email": email}]}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata), encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Practice 3.1 (222)\n    Points Possible,,,,,23\n"
                      '"Lovelace, Ada",501,00123,ada@uni.edu,S1,\n"Turing, Alan",502,A2,alan@uni.edu,S1,\n', encoding="utf-8")
    out, original = tmp_path / "graded", built / "autograder/practice-autograder.zip"

    done = _grade_cli(export, original, out, roster)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TA adjustments: " in done.stdout and (out / FILE).read_text(encoding="utf-8-sig") == HEADER  # there to fill
    # the TA grants two regrade requests: a row each, and runs the class again (nothing is regraded)
    (out / FILE).write_text(HEADER + "alan@uni.edu,q1,,+1,,regrade request 3: the step count is right,sam,2026-03-02\n"
                            "00123,q11,q11_bytes_bf16,-1,,integrity case 7: copied,kim,2026-03-03\n", encoding="utf-8")
    done = _grade_cli(export, original, out, roster)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 submissions: 0 graded" in done.stdout and f"{FILE}: 2 change(s) applied to 2 submission(s)" in done.stdout
    assert _canvas_scores(out) == {"Lovelace, Ada": "22", "Turing, Alan": "1"}
    rows = {r["name"]: r for r in _csv(out / "grades.csv")}
    assert [(rows[n]["total"], rows[n]["adjusted total"]) for n in ("Ada Lovelace", "Alan Turing")] == [("23", "22"), ("0", "1")]
    assert rows["Ada Lovelace"]["grader"] == f"attn-ref {attn_ref.__version__}"

    # the zip changes: every submission is regraded, q1's change still applies, and the row whose line is gone is listed
    version = _changed_zip(original, tmp_path / "practice-autograder.zip")
    done = _grade_cli(export, tmp_path / "practice-autograder.zip", out, roster)
    assert done.returncode == 4, done.stderr[-2000:]
    assert "2 submissions: 2 graded" in done.stdout
    assert f"warning: {FILE} row 3 (00123, q11 (line 'q11_bytes_bf16'): points -1): q11 has no line 'q11_bytes_bf16'" in done.stdout
    assert "mend or delete them and run again" in done.stderr and not (out / "canvas.csv").exists()
    rows = {r["name"]: r for r in _csv(out / "grades.csv")}
    assert [(rows[n]["total"], rows[n]["adjusted total"]) for n in ("Ada Lovelace", "Alan Turing")] == [("22", "22"), ("0", "1")]
    assert rows["Alan Turing"]["autograder"] == version and "row 3 not applied" in rows["Ada Lovelace"]["adjustments"]
    page = (out / "report.html").read_text()
    assert "regrade request 3: the step count is right" in page and "integrity case 7: copied" in page.split("Not applied")[1]
    assert f"attn-ref {attn_ref.__version__} with autograder {version} (2 submissions)" in page
    results = Results.read(out / "results" / "submission_1.json")
    assert (results.grader_version, results.autograder_version) == (attn_ref.__version__, version)

    # the TA deletes the row (the new zip takes that point itself): the run imports again
    (out / FILE).write_text(HEADER + "alan@uni.edu,q1,,+1,,regrade request 3: the step count is right,sam,2026-03-02\n",
                            encoding="utf-8")
    done = _grade_cli(export, tmp_path / "practice-autograder.zip", out, roster)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _canvas_scores(out) == {"Lovelace, Ada": "22", "Turing, Alan": "1"} and (out / FILE).stat().st_mode & 0o077 == 0


def _canvas_scores(out: Path) -> dict[str, str]:
    with open(out / "canvas.csv", newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Practice 3.1 (222)"]  # no second column
    return {r[0]: r[5] for r in rows[2:]}


def _with_lines(out: Path, key: str, passed: dict[str, bool], version: str = "v1") -> None:
    """results/<key>.json whose c3 lines are recorded (functions.py's extra_data["probes"]): a line's points when it
    passes."""
    points = {MASKED: 2.0, F32: 1.0}
    c3 = sum(points[line] for line, ok in passed.items() if ok)
    extra = {"submission": key, "status": "ok", "autograder_version": version, "outcome": "graded",
             "probes": [{"task": "c3", "probe": line, "passed": ok} for line, ok in passed.items()]}
    tests = [{"name": "c3: x", "score": c3, "max_score": 3.0}, {"name": "q4: x", "score": 2.0, "max_score": 2.0}]
    write_results(private_folder(out / "results") / f"{key}.json", {"score": 0, "tests": tests, "extra_data": extra})


def test_a_line_adjustment_follows_its_line_and_never_holds_back_the_import(tmp_path):
    """+2 granted on Ada's failing mask line applies while it fails; once a resubmission fixes it and another line
    fails, the +2 would give her full marks with a failing line: it is held, said, and canvas.csv is written."""
    out, subs = tmp_path / "graded", _class(tmp_path)[:1]
    canvas = {"roster": _roster(tmp_path), "assignment": "Lab 3.1 (55501)"}
    (private_folder(out) / FILE).write_text(HEADER + f"00123,c3,{MASKED},+2,,regrade 14: the mask is right,sam,\n"
                                            + f'00123,c3,"{F32}",-1,,copied line,kim,\n', encoding="utf-8")
    _with_lines(out, "s1", {MASKED: False, F32: True})
    book = write_gradebook(out, subs, _checks("v1"), canvas)
    assert [(a.before, a.after) for a in book.adjustments.applied] == [(1.0, 3.0), (3.0, 2.0)]
    _with_lines(out, "s1", {MASKED: True, F32: False})  # resubmitted: the mask right now, float32 wrong
    book = write_gradebook(out, subs, _checks("v1"), canvas)
    rows = {r["name"]: r for r in _csv(out / "grades.csv")}
    assert (rows["Ada Lovelace"]["total"], rows["Ada Lovelace"]["adjusted total"]) == ("4", "4")
    held = book.adjustments.not_applied
    assert [(n.row.number, n.problem) for n in held] == [(2, Problem.LINE_MOVED), (3, Problem.LINE_MOVED)]
    assert "now passes" in held[0].why and "now fails" in held[1].why
    assert not book.adjustments.holds_back_import and _canvas(out)["Lovelace, Ada"] == "4"
    assert "row 2 not applied: its line no longer asks it" in rows["Ada Lovelace"]["adjustments"]
