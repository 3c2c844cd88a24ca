"""The written ("explain") answers of a class for grading by hand: one HTML page per question (student text
escaped, never rendered) and a score sheet, written/scores.csv, that TAs fill and the next run merges.

Answers are found where students put them (attn_ref/portable/written.py): between a question's prompt and the next
question, Markdown and code comments, and flagged when typed into the prompt cell.
"""

from __future__ import annotations

import csv
import html
from collections import Counter
from pathlib import Path

from ...portable.written import written_answers
from ..inkernel.errors import GraderError
from ..inkernel.text import plain_lines
from ..intake import submission as submission_files
from ..owned import private_folder, write_private
from ..results import Results
from .spreadsheet import safe_cell, write_csv

SHEET = "scores.csv"
ID_FIELDS = ["submission", "name", "sid", "email"]

# Answers wrap inside the column, a long token (a URL, a row of digits) broken where it must: a TA never
# scrolls sideways to read an answer.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;overflow-wrap:anywhere}}
.answer{{border-top:1px solid #ccc;padding:.6rem 0}} .numbers{{color:#444;font-size:.9em}} .who{{font-weight:600}} .sid{{color:#666}}
.text{{white-space:pre-wrap;overflow-wrap:anywhere;overflow-x:auto;background:#f7f7f7;padding:.5rem;border-radius:4px}}
.blank{{color:#a00}}
.flag{{color:#a60;font-weight:600}}</style>
</head><body><h1>{title}</h1><p>{prompt}</p><p id="summary">{count} submissions; scores go in {sheet}
(out of {points:g}).</p>
{answers}
</body></html>
"""


def _answers(graded, questions: list[tuple[str, str]]) -> dict[str, dict]:
    """{submission key: {question: {"text", "in_prompt"}}} or {"__error__": reason}."""
    found = {}
    for g in graded:
        try:
            nb, _ = submission_files.load(g.sub.path)
        except Exception as err:  # an unreadable notebook: its row in grades.csv says why
            found[g.sub.key] = {"__error__": f"unreadable submission: {err}"}
            continue
        found[g.sub.key] = written_answers(nb.as_dict(), questions)
    return found


def _numbers(results: Results | None, question: str) -> str:
    """The student's own numbers for a question with parameters, as the grader graded them."""
    variant = results.variant if results is not None else None
    numbers = variant.get("numbers", {}).get(question) if isinstance(variant, dict) and isinstance(variant.get("numbers"), dict) else None
    if not isinstance(numbers, dict) or not numbers:
        return ""
    shown = ", ".join(f"{k} = {v}" for k, v in numbers.items())
    return f'<div class="numbers">their numbers: {html.escape(shown)}</div>'


def write_written_pages(folder: Path, book) -> None:
    private_folder(folder)
    per_submission = _answers(book.graded, [(w.question, w.prompt) for w in book.checks.written])
    for item in book.checks.written:
        blocks = []
        for g in book.graded:
            names = ", ".join(s.name for s in g.sub.people) or g.sub.shown_name
            sids = ", ".join(s.sid for s in g.sub.people if s.sid)
            answers = per_submission[g.sub.key]
            found = {"text": answers["__error__"], "in_prompt": False} if "__error__" in answers else answers[item.question]
            body = f'<div class="text">{html.escape(found["text"])}</div>' if found["text"] else '<div class="blank">(no answer)</div>'
            flag = '<div class="flag">typed into the question\'s prompt cell</div>' if found["in_prompt"] else ""
            blocks.append(f'<div class="answer"><div class="who">{html.escape(names)} '
                          f'<span class="sid">{html.escape(sids)} · {html.escape(g.sub.file_name)}</span></div>'
                          f'{_numbers(g.results, item.question)}{flag}{body}</div>')
        title = f"{item.question}: {item.title} (written part)"
        page = PAGE.format(title=html.escape(title), prompt=html.escape(item.prompt), count=len(book.graded),
                           sheet=SHEET, points=item.points, answers="\n".join(blocks))
        write_private(folder / f"{item.question}.html", plain_lines(page).encode())  # the text rule (text.py)


def _cell(row: dict, field: str) -> str:
    """A field in the form the sheet holds it (a name or file name that starts with = is written '=...), whether
    the TA's spreadsheet saved it with its ' or without."""
    return safe_cell(row.get(field) or "").strip()


def _same_student(row: dict, person: dict) -> bool:
    """Whether a sheet row, of the same submission, is this student's: by SID where both have one (a
    spreadsheet drops leading zeros: 00123 is 123), else by email (the case of ASCII letters aside), else by name."""
    sid, their_sid = _cell(row, "sid"), _cell(person, "sid")
    if sid and their_sid:
        return (sid.lstrip("0") or "0") == (their_sid.lstrip("0") or "0")
    email, their_email = _cell(row, "email"), _cell(person, "email")
    if email and their_email:
        return email == their_email or (email.isascii() and their_email.isascii() and email.lower() == their_email.lower())
    return _cell(row, "name") == _cell(person, "name")


class SheetError(GraderError, ValueError):
    """The score sheet cannot be read as this project writes it (a spreadsheet saved it in another form)."""


def _read_sheet(path: Path) -> list[dict]:
    """The sheet's rows (none where it is missing or empty); SheetError where a spreadsheet saved it in a form
    whose scores cannot be read (another encoding, ';' between cells): read as it stands, every score would be
    lost when the sheet is written again."""
    if not path.exists():
        return []
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = list(reader.fieldnames or [])
    except UnicodeDecodeError as err:
        raise SheetError(f"it is not UTF-8 (byte {err.start + 1} is not): save it as 'CSV UTF-8'") from None
    except csv.Error as err:
        raise SheetError(f"it is not a CSV file ({str(err)[:200]})") from None
    missing = [name for name in ID_FIELDS if name not in header]
    if header and missing:
        semicolons = " (it is separated by ';': save it with commas)" if any(";" in name for name in header) else ""
        raise SheetError(f"its first row has no column {', '.join(missing)}{semicolons}")
    return rows


def _score(text: str, column: str, top: float, who: str, warnings: list[str]) -> float | None:
    """A typed score, or None (blank, or not a score from 0 to ``top``: then with a warning)."""
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= top:
        warnings.append(f"{SHEET}: {who}, {column}: {text!r} is not a score from 0 to {top:g}; ignored")
        return None
    return value


def merge_written_scores(folder: Path, book) -> list[str]:
    """Read the TAs' scores from written/scores.csv into the gradebook, and rewrite the sheet with every
    student of the class (new ones added with blank scores). A typed score goes only to the one student its
    row can belong to: a row that two students could claim, or a student with two rows, gives no score, and
    the sheet is left as it is until the TA mends it. Nothing typed is lost: a row that matches no student
    now (a resubmission, an edited ID) is kept at the end of the sheet, with a warning. Returns warnings."""
    columns = [f"{w.question}_written" for w in book.checks.written]
    points = {f"{w.question}_written": float(w.points) for w in book.checks.written}
    path = folder / SHEET
    try:
        typed = _read_sheet(path)
    except SheetError as err:  # left as it is: the next run reads it once it is mended
        book.unreadable_sheet = str(err)
        return [f"{folder.name}/{SHEET} cannot be read: {err}; no written score is taken from it and it is left as it "
                "is: mend it and run again"]
    people = [(g, {"submission": g.sub.file_name, **person.row()}) for g in book.graded for person in g.sub.members]
    matches = _rows_of_each(typed, [row for _, row in people])
    claims = Counter(i for found in matches for i in found)
    warnings, rows, ambiguous = [], [], False
    for (g, row), found in zip(people, matches):
        if why := _not_theirs_alone(found, claims):
            ambiguous = True
            warnings.append(f"{SHEET}: {row['name']!r} of {row['submission']!r}: {why}; no score is given from them, and "
                            "the sheet is left as it is until each student has one row")
            found = []
        _take_scores(g, row, typed[found[0]] if found else {}, points, warnings)
        rows.append(row)
    orphans = _orphans(typed, claims, columns, warnings)
    if not ambiguous:  # rewritten only when every typed score found its one student: nothing typed is lost
        write_csv(path, ID_FIELDS + columns, rows + [{k: r.get(k) for k in ID_FIELDS + columns} for r in orphans])
    return warnings


def _orphans(typed: list[dict], claims: Counter, columns: list[str], warnings: list[str]) -> list[dict]:
    """The sheet's rows with typed scores that no student of the class claims now, said in a warning."""
    orphans = [row for i, row in enumerate(typed) if i not in claims and any((row.get(c) or "").strip() for c in columns)]
    if orphans:
        warnings.append(f"{SHEET}: {len(orphans)} row(s) with typed scores match no student of this class now "
                        f"({', '.join(repr(_cell(r, 'name')) for r in orphans[:5])}: a resubmission, or an edited ID?); "
                        "kept at the end of the sheet, given to no one")
    return orphans


def _not_theirs_alone(found: list[int], claims: Counter) -> str:
    """Why a student's typed row is not theirs alone (several rows, or a row several could claim), or ""."""
    if len(found) > 1:
        return f"{len(found)} rows are theirs"
    if found and claims[found[0]] > 1:
        return f"their row could be {claims[found[0]]} students' (the same names, no SID or email)"
    return ""


def _rows_of_each(typed: list[dict], people: list[dict]) -> list[list[int]]:
    """For each student of the class, the indexes of the sheet's rows that could be theirs."""
    by_submission: dict[str, list[int]] = {}
    for i, row in enumerate(typed):
        by_submission.setdefault(_cell(row, "submission"), []).append(i)
    return [[i for i in by_submission.get(_cell(row, "submission"), []) if _same_student(typed[i], row)] for row in people]


def _take_scores(g, row: dict, old: dict, points: dict[str, float], warnings: list[str]) -> None:
    """Copy one student's typed scores (``old``, their sheet row) into ``row`` (the sheet's new row) and into
    their submission's written scores; a blank or bad score is None there."""
    for column, top in points.items():
        text = (old.get(column) or "").strip()
        value = _score(text, column, top, row["name"], warnings)
        row[column] = text if value is None else value  # a number again, so the sheet keeps it as one
        if value is None:
            g.written.setdefault(column, None)
        elif g.written.get(column) is not None and g.written[column] != value:
            warnings.append(f"{SHEET}: {g.sub.key}, {column}: group members have different scores; the first is used")
        else:
            g.written[column] = value
