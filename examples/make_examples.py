"""Make the TA's example class: `practice-export.zip`, laid out as Gradescope's *Export Submissions* zip of the
practice assignment, and `canvas_gradebook.csv`, the course's Canvas gradebook export for the same students.

    python examples/make_examples.py [--release .] [--out examples/]

Three students sign in: Ada hands in the solution, Alan the blank notebook, Grace the solution with the note's
rounded 0.017 for q8 (a known mistake the report names). The files are byte-identical on every run; a test
(tests/docs/test_examples.py) holds the committed ones to this script and the committed release.
"""

from __future__ import annotations

import argparse
import copy
import io
import zipfile
from pathlib import Path

import nbformat

EXPORT = "assignment_5501_export"  # the top folder of Gradescope's zip (its assignment's id)
ZIP_DATE = (2026, 3, 1, 9, 0, 0)
COLUMN = "Practice 3.1: from recurrence to attention (222)"  # the roster's column for the assignment
# (submission id, name, SID, email, notebook, Gradescope's score)
STUDENTS = [
    ("2401", "Ada Lovelace", "00123", "ada@uni.edu", "solution", 23.0),
    ("2402", "Alan Turing", "00789", "alan@uni.edu", "blank", 0.0),
    ("2403", "Grace Hopper", "00456", "grace@uni.edu", "rounded", 22.0),
]
ROUNDED = "q8_product_39 = 0.017  # as the note prints it"


def notebook(release: Path, kind: str, email: str) -> bytes:
    """The practice notebook a student handed in, signed in with their email (their numbers follow it)."""
    folder = "assignments" if kind == "blank" else "solutions"
    nb = nbformat.read(str(release / folder / "practice/practice.ipynb"), as_version=4)
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.source = cell.source.replace('GRADESCOPE_ID = ""', f"GRADESCOPE_ID = {email!r}")
        if kind == "rounded" and cell.source.lstrip().startswith("q8_product_39 ="):
            cell.source = ROUNDED
    return nbformat.writes(nb).encode()


def metadata() -> bytes:
    lines = []
    for sid_key, name, sid, email, _, score in STUDENTS:
        lines += [f"submission_{sid_key}:", "  :submitters:", f"  - :name: {name}", f"    :sid: '{sid}'",
                  f"    :email: {email}", f"  :created_at: 2026-02-27 18:{sid_key[-2:]}:00.000000000 -08:00",
                  f"  :score: {score}", "  :status: processed"]
    return ("\n".join(lines) + "\n").encode()


def export_zip(release: Path) -> bytes:
    files = {f"{EXPORT}/submission_metadata.yml": metadata()}
    for sid_key, _, _, email, kind, _ in STUDENTS:
        files[f"{EXPORT}/submission_{sid_key}/practice.ipynb"] = notebook(release, kind, email)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return buffer.getvalue()


def roster() -> bytes:
    """Canvas's gradebook export: a BOM, its header, the Points Possible row, a row per student (by last name)."""
    rows = [f"Student,ID,SIS User ID,SIS Login ID,Section,{COLUMN}", "    Points Possible,,,,,29"]
    for i, (_, name, sid, email, _, _) in enumerate(sorted(STUDENTS, key=lambda s: s[1].split()[-1])):
        first, last = name.split()
        rows.append(f'"{last}, {first}",{100 + i},{sid},{email},S1,')
    return ("\ufeff" + "\r\n".join(rows) + "\r\n").encode()


def make(release: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = {out / "practice-export.zip": export_zip(release), out / "canvas_gradebook.csv": roster()}
    for path, data in written.items():
        path.write_bytes(data)
    return list(written)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default=".", help="the folder holding solutions/ and assignments/ (default: .)")
    parser.add_argument("--out", default="examples", help="where the two files go (default: examples/)")
    args = parser.parse_args()
    for path in make(Path(args.release), Path(args.out)):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
