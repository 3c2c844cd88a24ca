"""The seed sweep's record: every line of every implementation of a task under 1,500 seeds, kept beside the release
(`autograder/<zip>-sweep.json`, written by `attn-ref check` as `<name>-versions.txt` is) and keyed per task by all
that its verdicts depend on, so that a check sweeps a task whole again only when one of those has changed.

A task's verdicts are a function of its unit in checks.json and the unit's place among them (its probes'
random generators are seeded by that place), the helpers, its mutants, the bundled grader (the harness, the
sweep, the comparators, the stubs, the reference), the students' versions (requirements-student.txt: the
runner's interpreter) and the trusted side's NumPy and Python (they draw the inputs and compare); the key hashes
all of them. A record that holds is not trusted blindly: the check's own first sweep (100 seeds, 20 on lines of
fixed sizes) is made every time, and a line whose verdicts there are not the record's fails the check.

The file's format, read back only through ``read`` (anything else in it is ignored, never half-read):
    {"format": 1, "seeds": 1500, "tasks": {TASK: {"key": HEX, "swept": {"lines": {...}, "broken": {...}}}}}
with "swept" as `attn-ref probe-sweep` writes one task's.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
import zipfile
from pathlib import Path

import numpy as np

FORMAT = 1
# Zip members whose bytes the sweep reads: the bundled grader and the versions its runner and its kernels take.
# setup.sh and run_autograder only install and start it (a GPU zip differs there alone).
_SWEPT_MEMBERS = ("attn_ref/", "requirements-student.txt", "requirements-grader.txt")


def path(release: Path, zip_path: Path) -> Path:
    """Where a zip's record lives: beside the zip in the release, `autograder/<zip stem>-sweep.json`."""
    return Path(release) / "autograder" / f"{Path(zip_path).stem}-sweep.json"


def task_keys(zip_path: Path, mutants: dict[str, list[tuple[str, str]]], passes: dict) -> dict[str, str]:
    """{task: its key} for every function unit of the zip: what its sweep's verdicts depend on, hashed; ``passes``:
    the sweep's own numbers (seeds of each pass), which change what it records."""
    with zipfile.ZipFile(zip_path) as archive:
        checks = json.loads(archive.read("checks.json"))
        grader = hashlib.sha256()
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            if info.filename.startswith(_SWEPT_MEMBERS) and not info.is_dir():
                grader.update(info.filename.encode() + b"\0" + hashlib.sha256(archive.read(info)).digest())
    # version and seed_key digest the whole zip and every probe: each task's own part is keyed here, and the sweep
    # draws its own seeds (0 .. 1,499), so an edit to one task sweeps that task alone
    kept = {k: v for k, v in checks.items() if k not in ("units", "version", "seed_key")}
    # the trusted side's NumPy by its minor version: the record's claim is about 1,500 draws from the probes'
    # distributions, which a patch release keeps (its streams, its precision); a minor release sweeps again
    numpy = ".".join(np.__version__.split(".")[:2])
    shared = {"checks": kept, "grader": grader.hexdigest(), "numpy": numpy, "python": list(sys.version_info[:2]),
              "machine": platform.machine(), "passes": passes, "format": FORMAT}
    keys = {}
    for t_index, unit in enumerate(checks["units"]):
        if unit.get("kind") != "function":
            continue
        keyed = {**shared, "t_index": t_index, "unit": unit, "mutants": mutants.get(unit["name"], [])}
        keys[unit["name"]] = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()
    return keys


def read(file: Path) -> dict[str, tuple[str, dict]]:
    """{task: (key, its sweep)} from a record, the tasks whose entries have the form above; {} for a missing or
    unreadable file, or one of another format (its tasks are then swept again)."""
    try:
        record = json.loads(Path(file).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("tasks"), dict):
        return {}
    found = {}
    for task, entry in record["tasks"].items():
        if not isinstance(entry, dict):
            continue
        swept = entry.get("swept")
        if (isinstance(entry.get("key"), str) and isinstance(swept, dict) and isinstance(swept.get("lines"), dict)
                and isinstance(swept.get("broken"), dict)
                and all(isinstance(lines, dict) and all(isinstance(v, dict) for v in lines.values())
                        for lines in swept["lines"].values())):
            found[task] = (entry["key"], swept)
    return found


def write(file: Path, seeds: int, entries: dict[str, tuple[str, dict]]) -> None:
    """The record of ``entries`` ({task: (key, its sweep)}), byte for byte the same for the same sweeps."""
    record = {"format": FORMAT, "seeds": seeds,
              "tasks": {task: {"key": key, "swept": swept} for task, (key, swept) in sorted(entries.items())}}
    Path(file).parent.mkdir(parents=True, exist_ok=True)
    Path(file).write_text(json.dumps(record, sort_keys=True, indent=1) + "\n")


def disagreements(task: str, spot: dict, recorded: dict) -> list[str]:
    """Where this check's first sweep of a task (``spot``) saw a verdict its record never saw: a line passed
    that the record has failed under every seed, or the reverse (its seeds are among the record's)."""
    found = []
    for label, lines in spot["lines"].items():
        for line, v in lines.items():
            r = recorded["lines"].get(label, {}).get(line)
            if r is None:
                found.append(f"{task}: '{line}' of {label} is not in the record")
            elif (v["passed"] and not r.get("passed")) or (v["failed"] and not r.get("failed")):
                found.append(f"{task}: '{line}' of {label}: {v['passed']} passed and {v['failed']} failed here, "
                             f"{r.get('passed')} and {r.get('failed')} in the record")
    return found
