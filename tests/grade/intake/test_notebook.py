"""The notebook reader (attn_ref/grade/intake/notebook.py): every field of a notebook with a wrong type, a wrong
shape or a huge value is read into typed cells or refused as the student's error, never anything else; what
grading needs is checked, what it does not need costs nothing."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attn_ref.grade.intake import SubmissionError
from attn_ref.grade.intake.notebook import LONG, MAX_DEPTH, MAX_VALUES, Notebook, read

GOLDEN = Path(__file__).parents[2] / "golden" / "lab.ipynb"

NEEDED = {  # a path grading reads, and the words its refusal names
    ("cells",): "cell",  # "has no list of cells", or "cell 1 is not a cell"
    ("cells", 0): "cell 1",
    ("cells", 0, "cell_type"): "cell 1 has cell_type",
    ("cells", 0, "source"): "cell 1's source is",
    ("metadata", "otter"): "metadata.otter is",
    ("metadata", "otter", "assignment_name"): "assignment name is",
}
WRONG = {"int": 5, "float": 1e308, "bool": True, "none": None, "text": "x", "list": [], "list of ints": [5],
         "mapping": {"a": 1}, "deep": json.loads("[" * 50 + "]" * 50), "huge text": "x" * (2 << 20)}


def _golden() -> dict:
    nb = json.loads(GOLDEN.read_text())
    nb["cells"][0]["metadata"]["tags"] = ["setup"]
    return nb


def _paths(value, path=()):
    """Every path to a value in a notebook (the first two cells and the first output of each list stand for all)."""
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:2]):
            yield from _paths(inner, (*path, index))


def _set(nb: dict, path: tuple, value) -> dict:
    nb = copy.deepcopy(nb)
    here = nb
    for key in path[:-1]:
        here = here[key]
    here[path[-1]] = value
    return nb


def _read(nb) -> Notebook:
    return read(json.dumps(nb).encode(), "lab.ipynb")


def _needed(path: tuple, value) -> bool:
    """Whether ``value`` at ``path`` is a wrong type for a field grading reads."""
    if path[:1] == ("cells",) and len(path) > 1:
        path = ("cells", 0, *path[2:])  # every cell alike
    if path[:3] == ("cells", 0, "source") and len(path) == 4:
        return not isinstance(value, str)  # a line of a source given as lines
    if path == ("cells", 0, "source") and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return False  # a list of lines is a source
    if path == ("metadata", "otter", "assignment_name") and isinstance(value, str) and len(value) > LONG:
        return True  # no assignment's name
    if path in (("metadata", "otter"), ("metadata", "otter", "assignment_name")) and value is None:
        return False  # absent: the notebook names no assignment (check_assignment says so)
    if path == ("cells",):
        return not isinstance(value, list) or bool(value)  # [] is a notebook of no cells; no wrong value's item is a cell
    if path == ("cells", 0):
        return True  # no wrong value is a cell
    if path == ("cells", 0, "cell_type"):
        return value not in ("code", "markdown", "raw")
    kinds = {("cells",): list, ("cells", 0): dict, ("cells", 0, "source"): str, ("metadata", "otter"): dict,
             ("metadata", "otter", "assignment_name"): str}
    return path in kinds and not isinstance(value, kinds[path])


def test_every_field_with_a_wrong_value_is_read_or_the_students_error():
    """Each path of a real notebook, each wrong value: a needed field refused naming it; any other field ignored,
    the code read exactly as before; nothing else is ever raised."""
    nb = _golden()
    honest = _read(nb)
    paths = sorted(set(_paths(nb)) - {()}, key=str)
    assert len(paths) > 40 and set(NEEDED) <= set(paths)
    for path in paths:
        for label, value in WRONG.items():
            try:
                found = _read(_set(nb, path, value))
            except SubmissionError as err:
                too_much = label == "huge text" and "source" in path and "MB of" in str(err)
                assert _needed(path, value) or too_much, (path, label, str(err))
                if path in NEEDED and not too_much:
                    assert NEEDED[path] in str(err), (path, label, str(err))
                continue
            assert not _needed(path, value), (path, label)
            if path[:2] not in (("cells", 0), ("cells", 1)) and path != ("cells",):
                assert found.code == honest.code, (path, label)


@pytest.mark.parametrize("text, why", [
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nests more than {MAX_DEPTH} levels deep"),
    ('{"cells": [' + ",".join(["{}"] * MAX_VALUES) + "]}", f"more than {MAX_VALUES:,} values (each line"),
    ('{"cells": [' + ",".join(['"a"'] * MAX_VALUES) + "]}", f"more than {MAX_VALUES:,} values (each line"),
    ("{" * 5000, f"nests more than {MAX_DEPTH} levels deep"),
    ('["' + "[" * 5000 + '", ' + "[" * 101, f"nests more than {MAX_DEPTH} levels deep"),
    ('{"cells": "', "not valid JSON"),
])
def test_what_would_take_far_more_memory_than_its_bytes_is_refused_before_parsing(text, why):
    with pytest.raises(SubmissionError, match=re.escape(why)):
        read(text.encode(), "lab.ipynb")


def _values(path: Path) -> None:
    path.write_text('{"cells": [{"cell_type": "code", "source": "", "metadata": {"x": ['
                    + ",".join(["{}"] * (4 << 20)) + "]}}]}")


def _plot(path: Path) -> None:
    nb = json.loads(GOLDEN.read_text())
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "\U0001F600" + "x" * (48 << 20)}]
    path.write_text(json.dumps(nb, ensure_ascii=False))


@pytest.mark.parametrize("make, said, most", [(_values, "SubmissionError", 40), (_plot, "read", 48 + 20)],
                         ids=["8 MB of empty objects", "a 48 MB output with an emoji"])
def test_reading_a_notebook_costs_its_bytes_and_what_grading_reads(tmp_path, make, said, most):
    """8 MB of empty objects (21 KB zipped) took a grading process to 3.6 GB: refused from a scan with flat memory.
    A long output (one emoji makes each character of a decoded text 4 bytes) is never decoded: the reader holds
    the file's bytes and the code. Measured in a process of its own (VmHWM: its own peak)."""
    path = tmp_path / "lab.ipynb"
    make(path)
    probe = ("import re, sys\nfrom attn_ref.grade.intake.submission import load\n"
             "status = lambda key: int(re.search(key + r':\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))\n"
             "base = status('VmRSS')\n"
             "try:\n    print('read', len(load(sys.argv[1])[0].code))\nexcept Exception as err:\n"
             "    print(type(err).__name__, err)\n"
             "print((status('VmHWM') - base) >> 10)")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120)
    found, grown = done.stdout.strip().splitlines()
    assert found.startswith(said), found
    assert int(grown) < most, f"reading {path.stat().st_size >> 20} MB grew the reader by {grown} MB"


def test_the_typed_notebook_keeps_what_grading_reads_and_drops_outputs():
    nb = _golden()
    found = _read(nb)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert found.code == ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in code]
    assert [c.position for c in found.cells] == list(range(1, len(nb["cells"]) + 1))
    assert found.cells[0].tags == ("setup",) and found.assignment_name == "lab"
    again = json.loads(found.to_ipynb())
    assert all(c.get("outputs", []) == [] for c in again["cells"])
    assert ["".join(c["source"]) for c in again["cells"]] == [c.source for c in found.cells]
    assert read(found.to_ipynb(), "again").cells == found.cells


def test_fields_grading_does_not_read_are_ignored_with_a_warning():
    nb = _set(_set(_set(_golden(), ("nbformat",), "four"), ("metadata", "kernelspec"), 5), ("cells", 0, "metadata"),
              {"tags": "setup"})
    found = _read(nb)
    assert found.kernel_name is None and found.cells[0].tags == ()
    assert len(found.warnings) == 3 and all(w.startswith("lab.ipynb") for w in found.warnings)
    assert found.code == _read(_golden()).code
