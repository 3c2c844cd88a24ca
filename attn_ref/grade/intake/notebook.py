"""A notebook's JSON, read with bounds into typed cells.

The bytes are measured before they are parsed: how many values they hold and how deep they nest (json's
parser has no bound of its own: 8 MB of ``{}`` is four million dicts). Strings longer than LONG bytes (plots,
logs: outputs) are kept out of the parse, each left in the file's bytes and taken from there only where
grading reads it (a cell's source); so the grader holds the file once and what it reads, whatever the file
holds. Only each cell's type, source and tags and the notebook's assignment name are kept. A field grading
needs with a wrong type or shape is the student's error, naming the field and what to do; a field it does
not need is ignored, with a warning (an editor's quirk costs no one a grade).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

import nbformat

from ..inkernel.text import encodable, plain_text
from .errors import SubmissionError

MAX_NOTEBOOK = 64 << 20  # a notebook's bytes (honest ones embed plots)
LONG = 1 << 10  # bytes of a string kept out of the parse
MAX_PARSED = 8 << 20  # bytes parsed: the notebook less its long strings
MAX_VALUES = 500_000  # JSON values in a notebook: a lab notebook with its outputs holds a few thousand
MAX_DEPTH = 100  # JSON nesting: a notebook's cells nest 6 deep, outputs' JSON a few more
MAX_CELLS = 10_000
MAX_CODE = 1 << 20  # characters of the code cells together
MAX_TEXT = 8 << 20  # bytes of every cell's source together, as the file holds them
KINDS = ("code", "markdown", "raw")

# a JSON string, escapes included; one left open runs to the end of the file (else every quote after it starts a
# new try to the end: a 40 KB file of \" took seconds, quadratic)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*("|\Z)', re.S)  # group 1: its closing quote ("" if none)
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))


@dataclass(frozen=True)
class Cell:
    """One cell as grading reads it; ``position`` counts every cell from 1, as JupyterLab shows them."""

    cell_type: str  # "code", "markdown" or "raw"
    source: str
    position: int
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Notebook:
    """What grading reads of a notebook: its cells, the assignment it is for, and what was ignored in it."""

    cells: tuple[Cell, ...]
    assignment_name: str | None  # metadata.otter.assignment_name
    kernel_name: str | None  # metadata.kernelspec.name
    warnings: tuple[str, ...] = ()

    @property
    def code(self) -> list[str]:
        return [c.source for c in self.cells if c.cell_type == "code"]

    def as_dict(self) -> dict:
        """The cells as plain JSON-like data (what portable/written.py reads)."""
        return {"cells": [{"cell_type": c.cell_type, "source": c.source} for c in self.cells]}

    def to_ipynb(self) -> bytes:
        """The notebook as a file again, without outputs: what the kernel is given beside the code it runs."""
        nb = nbformat.v4.new_notebook()
        nb.metadata["otter"] = {"assignment_name": self.assignment_name} if self.assignment_name else {}
        make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
                "raw": nbformat.v4.new_raw_cell}
        for index, cell in enumerate(self.cells):
            made = make[cell.cell_type](cell.source, id=f"cell-{index}")
            if cell.tags:
                made.metadata["tags"] = list(cell.tags)
            nb.cells.append(made)
        return nbformat.writes(nb).encode()


def read(data: bytes, where: str) -> Notebook:
    """The notebook in ``data`` (named ``where`` in messages); raises SubmissionError with what to fix."""
    if not data.strip():  # a save that never finished, or an upload of nothing: said plainly, not as bad JSON
        raise SubmissionError(f"{where} is empty ({len(data)} bytes): no notebook was saved in it")
    if len(data) > MAX_NOTEBOOK:
        raise too_large(where, len(data))
    strings = _Strings(data, _long_strings(data, where))
    parsed = strings.parsed()
    if len(parsed) > MAX_PARSED:
        raise SubmissionError(f"{where} holds more than {MAX_PARSED >> 20} MB in short pieces of text; a notebook "
                              "holds far less (clear large outputs and submit again)")
    try:
        raw = json.loads(parsed.decode("utf-8"))
    except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        what = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else "not valid JSON"
        raise SubmissionError(f"{where} is not a readable Jupyter notebook ({what}); open it in Jupyter, save it "
                              "and submit again") from None
    return _typed(raw, where, strings)


def too_large(where: str, size: int) -> SubmissionError:
    return SubmissionError(f"{where} is {size >> 20} MB; a notebook may be at most {MAX_NOTEBOOK >> 20} MB "
                           "(clear large outputs and submit again)")


def _long_strings(data: bytes, where: str) -> list[tuple[int, int]]:
    """The spans of the strings longer than LONG, found in one pass that counts values and nesting between
    strings and stops at the first bound passed: memory stays flat and the time is bounded by MAX_VALUES."""
    spans, values, depth, deepest, start = [], 1, 0, 0, 0
    for match in _STRING.finditer(data):
        # the string itself counts (a file of adjacent strings has no separator to count)
        depth, deepest, values = _bounded(data, start, match.start(), depth, deepest, values + 1, where)
        if not match.group(1):
            raise SubmissionError(f"{where} is not a readable Jupyter notebook (not valid JSON: a string never ends); "
                                  "open it in Jupyter, save it and submit again")
        if match.end() - match.start() > LONG:
            spans.append(match.span())
        start = match.end()
    _bounded(data, start, len(data), depth, deepest, values, where)
    return spans


def _bounded(data: bytes, start: int, end: int, depth: int, deepest: int, values: int, where: str):
    """(depth, deepest, values) once data[start:end], a stretch between strings, is counted; raises past a bound."""
    if end > start:
        values += sum(data.count(c, start, end) for c in (b",", b":", b"[", b"{"))
    if values > MAX_VALUES:  # first: the brackets _nesting may read one by one are then at most MAX_VALUES
        raise SubmissionError(f"{where} holds more than {MAX_VALUES:,} values (each line of a cell or of an output "
                              "is one); a notebook holds a few thousand: clear large outputs, remove what you do not "
                              "need and submit again")
    depth, deepest = _nesting(data, start, end, depth, deepest) if end > start else (depth, deepest)
    if deepest > MAX_DEPTH:
        raise SubmissionError(f"{where} nests more than {MAX_DEPTH} levels deep; a notebook nests a few (clear its "
                              "outputs and metadata, or download it again and copy your code in)")
    return depth, deepest, values


def _nesting(data: bytes, start: int, end: int, depth: int, deepest: int) -> tuple[int, int]:
    """(depth after data[start:end], the deepest so far), brackets read one by one only where they could pass the
    bound (a stretch between two strings is a few characters; one of a million brackets is read in one go)."""
    opens = data.count(b"[", start, end) + data.count(b"{", start, end)
    closes = data.count(b"]", start, end) + data.count(b"}", start, end)
    if depth + opens <= MAX_DEPTH:
        return depth + opens - closes, max(deepest, depth + opens - closes, depth)
    for byte in data[start:end].translate(None, _NOT_BRACKET):
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
    return depth, deepest


class _Strings:
    """The long strings of a notebook, each replaced in the parse by a marker no file can foresee (a random
    nonce per read), and read from the file's bytes where grading asks for it."""

    def __init__(self, data: bytes, spans: list[tuple[int, int]]):
        nonce = os.urandom(8).hex()
        self.data, self.spans, self.tag, self.marker = data, spans, f"\0{nonce}:", b'"\\u0000' + nonce.encode() + b':%d"'

    def parsed(self) -> bytes:
        """The file with each long string replaced by its marker: what is parsed."""
        pieces, start = [], 0
        for index, (begin, end) in enumerate(self.spans):
            pieces += [self.data[start:begin], self.marker % index]
            start = end
        return b"".join([*pieces, self.data[start:]])

    def is_long(self, value) -> bool:
        return isinstance(value, str) and value.startswith(self.tag)

    def size(self, value) -> int:
        """The bytes the file holds for a string (a marker's long string, or a parsed one's length)."""
        if self.is_long(value):
            start, end = self.spans[int(value[len(self.tag):])]
            return end - start
        return len(value) if isinstance(value, str) else 0

    def text(self, value, where: str):
        """A parsed value with a marker replaced by its string from the file (SubmissionError where that string
        is not valid JSON, as the parse would have said); any other value as it is."""
        if not self.is_long(value):
            return value
        start, end = self.spans[int(value[len(self.tag):])]
        try:
            return json.loads(self.data[start:end])
        except ValueError as err:  # JSONDecodeError and UnicodeDecodeError
            what = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else "not valid JSON"
            raise SubmissionError(f"{where} is not a readable Jupyter notebook ({what}); open it in Jupyter, save it "
                                  "and submit again") from None

    def shown(self, value) -> str:
        """A value the student wrote, as a short plain phrase for a message (_shown), a long string by its size."""
        return f"a text of {self.size(value)} bytes" if self.is_long(value) else _shown(value)


def _typed(raw, where: str, strings: _Strings) -> Notebook:
    """The fields grading needs, checked; the rest ignored, with a warning where it has a wrong type."""
    if not isinstance(raw, dict):
        raise SubmissionError(f"{where} is not a Jupyter notebook (its JSON is not an object)")
    cells = raw.get("cells")
    if not isinstance(cells, list):
        old = " (it was saved in notebook format 3: open and save it in Jupyter)" if "worksheets" in raw else ""
        raise SubmissionError(f"{where} has no list of cells{old}")
    if len(cells) > MAX_CELLS:
        raise SubmissionError(f"{where} has {len(cells)} cells; at most {MAX_CELLS} are read")
    warnings: list[str] = []
    if raw.get("nbformat") != 4:
        warnings.append(f"{where} says it is notebook format {strings.shown(raw.get('nbformat'))}; it was read as "
                        "format 4")
    metadata = raw.get("metadata")
    if not isinstance(metadata, dict):
        warnings.append(f"{where}: the notebook's metadata is not a mapping; it was ignored")
        metadata = {}
    sources = [c.get("source") if isinstance(c, dict) else None for c in cells]
    held = sum(strings.size(line) for s in sources for line in (s if isinstance(s, list) else [s]))
    if held > MAX_TEXT:
        raise SubmissionError(f"the notebook's cells hold more than {MAX_TEXT >> 20} MB of text; remove what you "
                              "do not need")
    typed = tuple(_cell(cell, index + 1, where, warnings, strings) for index, cell in enumerate(cells))
    code = sum(len(c.source) for c in typed if c.cell_type == "code")
    if code > MAX_CODE:
        raise SubmissionError(f"the notebook's code cells hold more than {MAX_CODE >> 20} MB of code; remove what "
                              "you do not need")
    return Notebook(typed, _assignment(metadata, where, strings), _kernel(metadata, where, warnings, strings),
                    tuple(warnings))


def _cell(cell, position: int, where: str, warnings: list[str], strings: _Strings) -> Cell:
    if not isinstance(cell, dict):
        raise SubmissionError(f"{where}: cell {position} is not a cell (a JSON object); open the notebook in "
                              "Jupyter, save it and submit again")
    kind = cell.get("cell_type")
    if kind not in KINDS:
        raise SubmissionError(f"{where}: cell {position} has cell_type {strings.shown(kind)}; a cell is code, markdown or "
                              "raw (open the notebook in Jupyter, save it and submit again)")
    source = cell.get("source")
    source = [strings.text(line, where) for line in source] if isinstance(source, list) else strings.text(source, where)
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        shown = "a list holding more than text" if isinstance(source, list) else strings.shown(source)
        raise SubmissionError(f"{where}: cell {position}'s source is {shown}, not text (open the notebook in Jupyter, "
                              "save it and submit again)")
    return Cell(kind, encodable(source), position, _tags(cell.get("metadata"), position, where, warnings, strings))


def _tags(metadata, position: int, where: str, warnings: list[str], strings: _Strings) -> tuple[str, ...]:
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    if tags is None:
        return ()
    if isinstance(tags, list) and all(isinstance(t, str) and not strings.is_long(t) for t in tags):
        return tuple(encodable(t) for t in tags)
    warnings.append(f"{where}: cell {position}'s tags are not a list of text; they were ignored")
    return ()


def _assignment(metadata: dict, where: str, strings: _Strings) -> str | None:
    otter = metadata.get("otter")
    if otter is None:
        return None
    if not isinstance(otter, dict):
        raise SubmissionError(f"{where}: the notebook's metadata.otter is {_shown(otter)}, not a mapping (it names "
                              "the assignment); download the notebook again and copy your answers in")
    name = otter.get("assignment_name")
    if strings.is_long(name) or name is not None and not isinstance(name, str):
        raise SubmissionError(f"{where}: the notebook's assignment name is {strings.shown(name)}, not the "
                              "assignment's; download the notebook again and copy your answers in")
    return None if name is None else encodable(name)


def _kernel(metadata: dict, where: str, warnings: list[str], strings: _Strings) -> str | None:
    spec = metadata.get("kernelspec")
    if spec is None:
        return None
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or strings.is_long(name):
        warnings.append(f"{where}: the notebook's kernelspec names no kernel; it was ignored")
        return None
    return encodable(name)


def _shown(value) -> str:
    """A value the student wrote, as a short plain phrase for a message."""
    if isinstance(value, (dict, list)):
        return f"a {'mapping' if isinstance(value, dict) else 'list'}"
    return plain_text(repr(value)[:40])
