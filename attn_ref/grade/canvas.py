"""A Canvas gradebook import file (canvas.csv) from the class's gradebook and a Canvas roster.

Canvas matches imported rows on its own IDs or SIS IDs, never on names, so they come from the course's own
gradebook export (the roster): a student is matched by SIS User ID (the SID), Canvas ID, or SIS Login ID
(the email or its user part). Students who match no roster row are listed (canvas-unmatched.csv and a
warning), not dropped; roster students without a submission keep an empty cell (Canvas leaves them alone).

Every cell is made formula-safe (spreadsheet.py) except Canvas's ID columns: a ' in front would break the
match, so they are validated instead. A roster row with an ID a spreadsheet would read as a formula is left
out of canvas.csv (Canvas then leaves that student alone) and its student is listed as unmatched, with why.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .spreadsheet import FORMULA_WORDS, needs_escape, write_csv

ROSTER_FIELDS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
ID_FIELDS = ["ID", "SIS User ID", "SIS Login ID"]  # what Canvas matches on: written as they are, so checked


class RosterError(ValueError):
    """The roster is not a Canvas gradebook export."""


def read_roster(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [name for name in ROSTER_FIELDS if name not in (reader.fieldnames or [])]
        if missing:
            raise RosterError(f"{path}: not a Canvas gradebook export (no column {', '.join(missing)})")
        rows = []
        for row in reader:
            student = (row.get("Student") or "").strip()
            if student.startswith("Points Possible") or student in ("", "Student, Test"):
                continue  # Canvas's own extra rows
            rows.append({k: (row.get(k) or "").strip() for k in ROSTER_FIELDS})
    return rows


def _match(person: dict, roster: list[dict]) -> dict | None:
    sid, email = person.get("sid", "").strip(), person.get("email", "").strip().lower()
    for row in roster:
        if sid and sid in (row["SIS User ID"], row["ID"]):
            return row
    for row in roster:
        login = row["SIS Login ID"].lower()
        if email and login and login in (email, email.split("@")[0]):
            return row
    return None


def _formula_ids(row: dict) -> str:
    """The roster row's ID cells a spreadsheet would read as a formula ("" when none)."""
    return ", ".join(f"{k} {row[k]!r}" for k in ID_FIELDS if needs_escape(row[k]))


def _why_unmatched(person: dict, row: dict | None) -> str:
    if row is not None:
        return f"its roster row's {_formula_ids(row)} starts with {FORMULA_WORDS}; Canvas IDs are never escaped, so that row is left out"
    bad = [f"{k} {person[k]!r}" for k in ("sid", "email") if needs_escape(person[k])]
    return "no roster row has this SID or login" + (f"; {', '.join(bad)} starts with {FORMULA_WORDS}, as no Canvas ID may" if bad else "")


def _names(people: list[dict], key: str) -> str:
    return ", ".join(p[key] for p in people[:5]) + (" …" if len(people) > 5 else "")


def write_canvas(out: Path, book, roster: Path, assignment: str | None = None) -> list[str]:
    """canvas.csv (and canvas-unmatched.csv when someone did not match); returns warnings."""
    roster_rows = read_roster(Path(roster))
    refused = [row for row in roster_rows if _formula_ids(row)]
    column = assignment or book.checks.get("title") or book.checks["assignment"]
    scores: dict[str, float] = {}
    unmatched = []
    for g in book.graded:
        for person in g.sub.students or [{"name": g.sub.key, "sid": "", "email": ""}]:
            row = _match(person, roster_rows)
            if row is None or row in refused:
                unmatched.append({"name": person["name"] or g.sub.key, "sid": person["sid"], "email": person["email"],
                                  "submission": g.sub.path.name, "total": g.total, "reason": _why_unmatched(person, row)})
            else:
                scores[row["ID"] or row["SIS User ID"]] = g.total
    points = sum(book.maximum(u) for u in book.units + book.written_units)
    rows = [["Points Possible", "", "", "", "", points]]
    rows += [[row[k] for k in ROSTER_FIELDS] + [scores.get(row["ID"] or row["SIS User ID"])]
             for row in roster_rows if row not in refused]
    write_csv(out / "canvas.csv", [*ROSTER_FIELDS, column], rows)
    warnings = []
    if refused:
        warnings.append(f"canvas.csv: {len(refused)} roster row(s) left out ({_names(refused, 'Student')}): an ID starts with "
                        f"{FORMULA_WORDS}, and escaping it would break Canvas's match")
    if not unmatched:
        (out / "canvas-unmatched.csv").unlink(missing_ok=True)
        return warnings
    write_csv(out / "canvas-unmatched.csv", list(unmatched[0]), unmatched)
    return warnings + [f"canvas.csv: {len(unmatched)} student(s) match no roster row by SID or login, or only one left out "
                       f"({_names(unmatched, 'name')}): see canvas-unmatched.csv for why"]
