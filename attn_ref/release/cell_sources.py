"""Which of an assignment's files a notebook cell came from: a solution cell that raises while the build
runs it is reported as that file and line, in one sentence, not as a notebook traceback."""

from __future__ import annotations

import re
from pathlib import Path

from .course import Assignment
from .units import Question

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MARKER = re.compile(r"^\s*# (BEGIN|END) SOLUTION")


def _lines(source: str) -> list[str]:
    return [line.split("# SOLUTION")[0].strip() for line in source.splitlines()]


def _candidates(assignment: Assignment) -> list[tuple[Path, str]]:
    """(file, its source) of every cell the solution notebook runs: setup, each unit's solution, exploration."""
    folder = assignment.folder
    found = [(folder / assignment.layout.setup, assignment.setup)] if assignment.setup else []
    for unit in assignment.units:
        found.append((folder / unit.name / "solution.py", unit.solution if isinstance(unit, Question) else unit.starter))
    found += [(folder / name, source) for name, (source, _) in zip(assignment.layout.exploration, assignment.exploration)]
    return found


def source_of(cell_source: str, assignment: Assignment) -> Path | None:
    """The file whose lines the cell shares most (otter rewrites markers and prompts, not the code)."""
    cell = {line for line in _lines(cell_source) if line}
    best, best_shared = None, 0
    for path, source in _candidates(assignment):
        shared = len(cell & {line for line in _lines(source) if line and not _MARKER.match(line)})
        if shared > best_shared:
            best, best_shared = path, shared
    return best


def failure(nb, assignment: Assignment) -> tuple[str, str]:
    """(one sentence naming the file and line, the traceback) for the first cell of an executed notebook
    that holds an error output."""
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not errors:
            continue
        error = errors[0]
        trace = _ANSI.sub("", "\n".join(error.get("traceback", [])))
        path = source_of(cell.source, assignment)
        where = str(path) if path else "a cell of the solution notebook"
        cell_lines = [int(n) for n in re.findall(r"^Cell In\[\d+\], line (\d+)", trace, re.M)]
        if path is not None and cell_lines and cell_lines[0] <= len(cell.source.splitlines()):
            text = _lines(cell.source)[cell_lines[0] - 1]
            file_lines = _lines(path.read_text()) if path.is_file() else []
            if text and text in file_lines:
                where += f", line {file_lines.index(text) + 1}"
        what = f"{error.get('ename', 'Error')}: {error.get('evalue', '')}".strip()
        return (f"{where}: {what} (raised while the build ran the solution notebook; fix that file, or run "
                f"with --verbose for the traceback)"), trace
    return "the solution notebook raised an error", ""
