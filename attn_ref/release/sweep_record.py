"""The seed sweep's record: every line of every implementation of a task under 1,500 seeds, kept with the course
(`<assignment folder>/sweep-record.json`, committed beside the assignment's sources, so a new `--out` or a fresh
clone holds it) and keyed per task by all that its verdicts depend on, so that a check sweeps a task whole again
only when one of those has changed.

A task's verdicts are a function of its unit in checks.json and the unit's place among them (its probes'
random generators are seeded by that place), the helpers, its mutants, the bundled grader's files the sweep runs
(``grader_members``: the probe verbs' modules and all they import, and the files started or sent into kernels by
path), the students' versions (requirements-student.txt: the runner's interpreter) and the trusted side's NumPy
and Python (they draw the inputs and compare); the key hashes all of them, and nothing else (a TA's report, the
Canvas import and the command line of `attn-ref grade` are not in it). A record that holds is not trusted
blindly: the check's own first sweep (100 seeds, 20 on lines of fixed sizes) is made every time, and a line
whose verdicts there are not the record's fails the check.

The file's format, read back only through ``read`` (anything else in it is ignored, never half-read):
    {"format": 2, "seeds": 1500, "tasks": {TASK: {"key": HEX, "swept": {"lines": {...}, "broken": {...}}}}}
with "swept" as `attn-ref probe-sweep` writes one task's. (Format 1 lived beside the release and keyed every
file of the grader: such a record is not read, and its tasks are swept again.)
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
import sys
import zipfile
from pathlib import Path

import numpy as np

FORMAT = 2
FILE_NAME = "sweep-record.json"
# The verbs `attn-ref check` runs through the zip's grader (grade/proofs/commands.py) and the options the command
# line defines (grade/arguments.py): their modules and every module of attn_ref they import, at any depth and
# inside functions too, are what the sweep executes.
SWEEP_MODULES = ("attn_ref.grade.proofs.commands", "attn_ref.grade.arguments")
# Files the sweep runs without importing them: the entry point (its lazy imports serve other verbs and are not
# followed), and what is started as a script or sent into a kernel by path.
RUN_BY_PATH = ("attn_ref/__init__.py", "attn_ref/__main__.py", "attn_ref/cli.py", "attn_ref/grade/inkernel/",
               "attn_ref/grade/student_python/")
VERSIONS = ("requirements-student.txt", "requirements-grader.txt")  # the versions its runner and its kernels take


def path(assignment_folder: Path) -> Path:
    """Where an assignment's record lives: in its folder of the course, beside assignment.py."""
    return Path(assignment_folder) / FILE_NAME


def grader_members(sources: dict[str, bytes]) -> list[str]:
    """The zip's members the sweep depends on, of ``sources`` ({member: bytes}): SWEEP_MODULES and the attn_ref
    modules they import, RUN_BY_PATH and VERSIONS; sorted."""
    seen: set[str] = set()
    todo = list(SWEEP_MODULES)
    while todo:
        member = _member(todo.pop(), sources)
        if member is None or member in seen:
            continue
        seen.add(member)
        module = member[:-len("/__init__.py")] if member.endswith("/__init__.py") else member[:-len(".py")]
        package = module.replace("/", ".")
        parts = package.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # its packages' __init__ run first
        todo += _imports(sources[member], package if member.endswith("/__init__.py") else package.rpartition(".")[0])
    seen.update(m for m in sources if m.startswith(RUN_BY_PATH) or m in VERSIONS)
    return sorted(seen)


def _member(module: str, sources: dict[str, bytes]) -> str | None:
    base = module.replace(".", "/")
    return next((m for m in (f"{base}/__init__.py", f"{base}.py") if m in sources), None)


def _imports(source: bytes, package: str) -> list[str]:
    """The attn_ref modules a module's source imports anywhere in it (a name imported from a package may be a
    module: both are tried)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found += [base] + [f"{base}.{a.name}" for a in node.names]
    return [name for name in found if name.split(".")[0] == "attn_ref"]


def task_keys(zip_path: Path, mutants: dict[str, list[tuple[str, str]]], passes: dict) -> dict[str, str]:
    """{task: its key} for every function unit of the zip: what its sweep's verdicts depend on, hashed; ``passes``:
    the sweep's own numbers (seeds of each pass), which change what it records."""
    with zipfile.ZipFile(zip_path) as archive:
        checks = json.loads(archive.read("checks.json"))
        sources = {i.filename: archive.read(i) for i in archive.infolist()
                   if not i.is_dir() and (i.filename.startswith("attn_ref/") or i.filename in VERSIONS)}
    grader = hashlib.sha256()
    for member in grader_members(sources):
        grader.update(member.encode() + b"\0" + hashlib.sha256(sources[member]).digest())
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


def write(file: Path, seeds: int, entries: dict[str, tuple[str, dict]]) -> bool:
    """The record of ``entries`` ({task: (key, its sweep)}), byte for byte the same for the same sweeps; the file
    is left untouched where it holds those bytes already. Whether it was written."""
    record = {"format": FORMAT, "seeds": seeds,
              "tasks": {task: {"key": key, "swept": swept} for task, (key, swept) in sorted(entries.items())}}
    text = json.dumps(record, sort_keys=True, indent=1) + "\n"
    file = Path(file)
    if file.is_file() and file.read_text() == text:
        return False
    file.parent.mkdir(parents=True, exist_ok=True)
    part = file.with_name(file.name + ".part")
    part.write_text(text)
    part.replace(file)
    return True


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
