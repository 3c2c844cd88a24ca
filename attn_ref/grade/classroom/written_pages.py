"""The written ("explain") answers of a class for grading by hand: one HTML page per question (student text
escaped, never rendered) and a score sheet, written/scores.csv, that TAs fill and the next run merges.

Answers are found where students put them (attn_ref/written.py): between a question's prompt and the next
question, Markdown and code comments, and flagged when typed into the prompt cell.
"""

from __future__ import annotations

import csv
import html
from pathlib import Path

from ...written import written_answers
from .. import submission as submission_files
from ..owned import private_folder, write_private
from ..text import plain_lines
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
        found[g.sub.key] = written_answers(nb, questions)
    return found


def _numbers(results: dict | None, question: str) -> str:
    """The student's own numbers for a question with parameters, as the grader graded them."""
    variant = ((results or {}).get("extra_data") or {}).get("variant")
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
            names = ", ".join(s["name"] for s in g.sub.students) or g.sub.key
            sids = ", ".join(s["sid"] for s in g.sub.students if s["sid"])
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


def _key(row: dict) -> tuple[str, str]:
    """A student's row in the sheet: its submission and the student's SID, else email, else name, compared in
    the form the sheet holds them (a name or file name that starts with = is written '=...), whether the
    TA's spreadsheet saved it with its ' or without."""
    return safe_cell(row.get("submission", "")), safe_cell(row.get("sid") or row.get("email") or row.get("name", ""))


def _typed_rows(path: Path) -> tuple[dict[tuple[str, str], dict], list[str]]:
    """The sheet's rows by key; two rows with one key (a row copied in the spreadsheet) are both dropped, with a
    warning: a typed score is given only to the one student it can belong to."""
    if not path.exists():
        return {}, []
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    keys = [_key(row) for row in rows]
    twice = {key for key in keys if keys.count(key) > 1} if len(set(keys)) < len(keys) else set()
    warnings = [f"{SHEET}: {len([k for k in keys if k == key])} rows for {key[1]!r} of {key[0]!r}; their scores are "
                "ignored, and the sheet is left as it is, until one row is left" for key in sorted(twice)]
    return {key: row for key, row in zip(keys, rows) if key not in twice}, warnings


def merge_written_scores(folder: Path, book) -> list[str]:
    """Read the TAs' scores from written/scores.csv into the gradebook, and rewrite the sheet with every
    student of the class (new ones added with blank scores; what TAs typed is kept). Returns warnings."""
    columns = [f"{w.question}_written" for w in book.checks.written]
    points = {f"{w.question}_written": float(w.points) for w in book.checks.written}
    path = folder / SHEET
    kept, warnings = _typed_rows(path)
    ambiguous, rows = bool(warnings), []
    for g in book.graded:
        for person in g.sub.students or [{"name": g.sub.key, "sid": "", "email": ""}]:
            row = {"submission": g.sub.file_name, "name": person["name"] or g.sub.key, "sid": person["sid"],
                   "email": person["email"]}
            old = kept.get(_key(row), {})
            for column in columns:
                text = (old.get(column) or "").strip()
                row[column] = text
                if not text:
                    g.written.setdefault(column, None)
                    continue
                try:
                    value = float(text)
                except ValueError:
                    value = None
                if value is None or not 0 <= value <= points[column]:
                    warnings.append(f"{SHEET}: {row['name']}, {column}: {text!r} is not a score from 0 to {points[column]:g}; ignored")
                    g.written.setdefault(column, None)
                    continue
                row[column] = value  # a number again, so the sheet keeps it as one (spreadsheet.py)
                if g.written.get(column) is not None and g.written[column] != value:
                    warnings.append(f"{SHEET}: {g.sub.key}, {column}: group members have different scores; the first is used")
                    continue
                g.written[column] = value
            rows.append(row)
    if not ambiguous:  # rewritten only when every typed score found its one student: nothing typed is lost
        write_csv(path, ID_FIELDS + columns, rows)
    return warnings
