"""An export's submission_metadata.yml, read in a child process (attn_ref/grade/intake/metadata.py): nesting that
ended a run with RecursionError, and 8 MB of small values that took the TA's process to 1 GB, each tested by the
attack itself; the TA's process never holds the YAML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attn_ref.grade.intake import ExportError, metadata

PROBE = """import json, re, sys
from pathlib import Path
from attn_ref.grade.classroom.discover import discover
status = lambda key: int(re.search(key + r':\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))
base = status('VmRSS')
try:
    said = [[s.key, s.problem, len(s.students)] for s in discover(Path(sys.argv[1]), Path(sys.argv[2]))]
except Exception as err:
    said = [type(err).__name__, str(err)]
print(json.dumps({'said': said, 'grown': (status('VmHWM') - base) >> 10}))
"""


def _discover(export: Path, out: Path) -> dict:
    """What discover says of an export folder, and how much the TA's process grew (VmHWM: its own peak, not the
    child's), in a process of its own."""
    done = subprocess.run([sys.executable, "-c", PROBE, str(export), str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _export(tmp_path: Path, text: str) -> Path:
    export = tmp_path / "export"
    (export / "s1").mkdir(parents=True)
    (export / "s1" / "lab.ipynb").write_text("{}")
    (export / metadata.METADATA).write_text(text)
    return export


@pytest.mark.parametrize("text", ["s1:\n  :submitters: " + "[" * 600 + "]" * 600 + "\n",
                                  "s1:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(600)) + "  " * 601 + "x\n",
                                  "s1: " + "{a: " * 3000 + "b" + "}" * 3000 + "\n"],
                         ids=["a list 600 deep", "a mapping 600 deep", "flow mappings 3,000 deep"])
def test_metadata_nested_deep_is_told_never_raised(tmp_path, text):
    found = _discover(_export(tmp_path, text), tmp_path / "out")
    said = found["said"]
    if said[0] == "AutograderError":  # refused as a whole, saying why
        assert "cannot be read: it nests deeper" in said[1] or "maximum nesting depth" in said[1], said
    else:  # read: what grading reads of it is shallow
        assert said == [["s1", "", 0]] or "not a mapping" in said[0][1], said


def test_8_mb_of_small_values_stays_out_of_the_tas_process(tmp_path):
    many = "".join(f"    - {{':name': n{i}, ':sid': '{i}'}}\n" for i in range(250_000))
    found = _discover(_export(tmp_path, f"s1:\n  :submitters:\n{many}"), tmp_path / "out")
    [[key, problem, students]] = found["said"]
    assert key == "s1" and problem.startswith("the export names 250000 submitters for s1") and students == 50
    assert found["grown"] < 60, f"the TA's process grew by {found['grown']} MB"


def test_an_unreadable_file_says_why(tmp_path):
    path = tmp_path / metadata.METADATA
    for text, why in [("s1: [unclosed\n", "not valid YAML"), ("- a\n- b\n", "not a mapping of submission folders"),
                      ("? [a, b]\n: 1\n", "a key that is not a plain value")]:
        path.write_text(text)
        with pytest.raises(ExportError, match=why):
            metadata.read(path)
    path.write_bytes(b"s1: \xff\xfe\n")
    with pytest.raises(ExportError, match="not valid YAML"):
        metadata.read(path)


def test_entries_keep_what_grading_reads_each_field_plain_and_typed(tmp_path):
    path = tmp_path / metadata.METADATA
    path.write_text(
        "s2:\n  :submitters:\n    - {':name': \"Ada\\u202e\", ':sid': 00123, ':email': [x]}\n  :score: '7.5'\n"
        "  :results:\n    tests:\n      - {name: 'c1: softmax', score: 2}\n      - 5\n"
        "s1: hello\n"
        "s3:\n  :score: 1\n  :score: 2\n"
        "s3:\n  :submitters: []\n")
    entries = {e.folder: e for e in metadata.read(path)}
    assert entries["s2"].students == [{"name": "Ada?", "sid": "00123", "email": ""}]
    assert entries["s2"].score == 7.5 and entries["s2"].tests == {"c1": 2.0} and entries["s2"].problem == ""
    assert "is not a mapping" in entries["s1"].problem
    assert "lists s3 2 times" in entries["s3"].problem
