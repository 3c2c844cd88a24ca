"""A Canvas gradebook import file (canvas.csv) from the class's gradebook and a Canvas roster.

Canvas matches imported rows on its own IDs or SIS IDs, never on names, so they come from the course's own
gradebook export (the roster): a student is matched by SIS User ID (the SID), Canvas ID, or SIS Login ID
(the email or its user part). Students who match no roster row are listed (canvas-unmatched.csv and a
warning), not dropped; roster students without a submission keep an empty cell (Canvas leaves them alone).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .results import write_atomically

ROSTER_FIELDS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


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


def write_canvas(out: Path, book, roster: Path, assignment: str | None = None) -> list[str]:
    """canvas.csv (and canvas-unmatched.csv when someone did not match); returns warnings."""
    roster_rows = read_roster(Path(roster))
    column = assignment or book.checks.get("title") or book.checks["assignment"]
    scores: dict[str, str] = {}
    unmatched = []
    for g in book.graded:
        for person in g.sub.students or [{"name": g.sub.key, "sid": "", "email": ""}]:
            row = _match(person, roster_rows)
            if row is None:
                unmatched.append({"name": person["name"] or g.sub.key, "sid": person["sid"], "email": person["email"],
                                  "submission": g.sub.path.name, "total": f"{g.total:g}"})
            else:
                scores[row["ID"] or row["SIS User ID"]] = f"{g.total:g}"
    points = sum(book.maximum(u) for u in book.units + book.written_units)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([*ROSTER_FIELDS, column])
    writer.writerow(["Points Possible", "", "", "", "", f"{points:g}"])
    for row in roster_rows:
        writer.writerow([row[k] for k in ROSTER_FIELDS] + [scores.get(row["ID"] or row["SIS User ID"], "")])
    write_atomically(out / "canvas.csv", ("\ufeff" + buffer.getvalue()).encode())
    if not unmatched:
        (out / "canvas-unmatched.csv").unlink(missing_ok=True)
        return []
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(unmatched[0]))
    writer.writeheader()
    writer.writerows(unmatched)
    write_atomically(out / "canvas-unmatched.csv", ("\ufeff" + buffer.getvalue()).encode())
    names = ", ".join(u["name"] for u in unmatched[:5]) + (" …" if len(unmatched) > 5 else "")
    return [f"canvas.csv: {len(unmatched)} student(s) match no roster row by SID or login ({names}): see canvas-unmatched.csv"]
