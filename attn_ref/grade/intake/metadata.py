"""A Gradescope export's submission_metadata.yml, read in a child process into typed entries.

PyYAML has no bound of its own: its composer recurses once per level (600 levels ended a run with
RecursionError) and keeps a node object per value (8 MB of small values took the TA's process to 1 GB). So
the file is parsed by `python -m attn_ref.grade.intake.metadata FILE`, limited in memory and time, which
prints only what the grader reads of each entry (its submitters, Gradescope's scores, why it cannot be taken
as it stands) as JSON; the TA's process reads that back, checked, and never holds the YAML. Every scalar is
read as a string (an unquoted SID 00123 stays 00123), and a key given twice keeps each value (YAML forbids
it; a plain loader kept the last, and a submission listed twice lost its first submitters).
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..inkernel.text import cap, plain_text
from .errors import ExportError

METADATA = "submission_metadata.yml"
MAX_METADATA = 256 << 20  # every submitter, and Gradescope's results (~70 KB a submission)
MAX_ENTRIES = 100_000  # submissions of one export
MAX_FIELD = 200  # a name, SID or email from the export
MAX_SUBMITTERS = 50  # of one submission (Gradescope's groups are a few students)
MAX_TESTS = 500  # of one submission's results in the export
MEMORY = 4 << 30  # the child's address space: ~15x the largest honest file's size
SECONDS = 300  # the child's CPU and wall time
MAX_DEPTH = 200  # nesting the child reads; an export's entries nest 5 deep
MAX_PRINTED = 16 << 20  # what the child prints, in all: ~300 bytes a submission (YAML aliases multiply entries)


@dataclass(frozen=True)
class ExportEntry:
    """What the export says of one submission folder, each field plain text and bounded."""

    folder: str
    students: list[dict] = field(default_factory=list)  # [{"name", "sid", "email"}], at most MAX_SUBMITTERS
    score: float | None = None  # Gradescope's total
    tests: dict = field(default_factory=dict)  # {test name: Gradescope's score}
    problem: str = ""  # why the entry cannot be taken as it stands (listed twice, not a mapping, a key twice)
    too_many: str = ""  # more submitters than are read


def read(path: Path) -> list[ExportEntry]:
    """The entries of ``path`` (an export's metadata file), in the file's order of folders; ExportError says
    why it cannot be read."""
    path = Path(path)
    if path.stat().st_size > MAX_METADATA:
        raise ExportError(f"{path} is larger than {MAX_METADATA >> 20} MB")
    try:
        done = subprocess.run([sys.executable, "-m", __name__, str(path)], capture_output=True, timeout=SECONDS,
                              preexec_fn=_limits, check=False)
    except subprocess.TimeoutExpired:
        raise ExportError(f"{path} took more than {SECONDS} s to read (an edited or crafted file?)") from None
    try:
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        found = None
    if not isinstance(found, dict) or "error" in found or not isinstance(found.get("entries"), list):
        why = found.get("error") if isinstance(found, dict) else None
        if not isinstance(why, str):
            stopped = f" (stopped by signal {-done.returncode})" if done.returncode < 0 else ""
            why = f"its reader took more than {MEMORY >> 30} GB or {SECONDS} s, or failed{stopped}"
        raise ExportError(f"{path} cannot be read: {plain_text(why)[:300]}")
    return [_entry(e) for e in found["entries"] if isinstance(e, dict)]


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (SECONDS, SECONDS))


def _entry(raw: dict) -> ExportEntry:
    """An entry as the child printed it, its types checked again (the child read a file a student may touch)."""
    students = [{k: _text(s.get(k)) for k in ("name", "sid", "email")}
                for s in raw.get("students", []) if isinstance(s, dict)][:MAX_SUBMITTERS]
    tests = raw.get("tests") if isinstance(raw.get("tests"), dict) else {}
    folder = raw.get("folder")  # as the file names it (its folder on disk); made plain where it is shown
    return ExportEntry(folder[:10_000] if isinstance(folder, str) else "", students, _number(raw.get("score")),
                       {_text(k): _number(v) for k, v in list(tests.items())[:MAX_TESTS]},
                       _text(raw.get("problem"), 1_000), _text(raw.get("too_many"), 1_000))


def _text(value, limit: int = MAX_FIELD) -> str:
    return cap(value, limit) if isinstance(value, str) else ""


def _number(value) -> float | None:
    """A finite number, or None ("nan" and "1e999" are no score)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# ---- the child: the only code that holds the YAML ---------------------------------------------------------


@dataclass(frozen=True)
class Repeated:
    """A key a YAML mapping gives more than once, with every value it was given, in order."""

    entries: tuple


def _loader():
    """PyYAML's BaseLoader (libyaml's where PyYAML has it) whose mappings keep a repeated key's values."""
    import yaml

    class Loader(getattr(yaml, "CBaseLoader", yaml.BaseLoader)):
        def construct_mapping(self, node, deep=False):
            if not isinstance(node, yaml.MappingNode):
                raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
            values: dict = {}
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(None, None, "a key that is not a plain value",
                                                            key_node.start_mark) from None
                values.setdefault(key, []).append(self.construct_object(value_node, deep=deep))
            return {key: found[0] if len(found) == 1 else Repeated(tuple(found)) for key, found in values.items()}

    return Loader


def _submitters(entry) -> list:
    submitters = entry.get(":submitters") if isinstance(entry, dict) else None
    return submitters if isinstance(submitters, list) else []


def _students(entry) -> list[dict]:
    """The submitters an entry names, at most MAX_SUBMITTERS (YAML aliases can make one list stand for every
    entry: bounded here, so what is printed stays proportional to the file)."""
    entries = entry.entries if isinstance(entry, Repeated) else [entry]
    listed = [s for e in entries for s in _submitters(e)[:MAX_SUBMITTERS]][:MAX_SUBMITTERS]
    return [{"name": _text(s.get(":name")), "sid": _text(s.get(":sid")), "email": _text(s.get(":email"))}
            for s in listed if isinstance(s, dict)]


def _problem(folder: str, entry) -> str:
    """Why an entry cannot be taken as it stands (listed twice, not a mapping, a key of it twice), or ""."""
    if isinstance(entry, Repeated):
        return (f"the export's {METADATA} lists {folder} {len(entry.entries)} times, so which submitters and score "
                "are its own is unknown (an edited or broken export); its submitters are each named here")
    if not isinstance(entry, dict):
        return f"the export's entry for {folder} is not a mapping (its submitters and score)"
    if twice := [str(key) for key, value in entry.items() if isinstance(value, Repeated)]:
        return (f"the export's entry for {folder} gives {plain_text(twice[0])[:40]!r} more than once (an edited or "
                "broken export)")
    return ""


def _too_many(folder: str, entry) -> str:
    count = len(_submitters(entry))
    if count <= MAX_SUBMITTERS:
        return ""
    return (f"the export names {count} submitters for {folder}, more than the {MAX_SUBMITTERS} a submission is read "
            f"with (an edited or broken export?); the first {MAX_SUBMITTERS} are named here")


def _scores(entry) -> tuple[float | None, dict]:
    """Gradescope's own scores for a submission: its total, and per test where its results are included."""
    entry = entry if isinstance(entry, dict) else {}
    results = entry.get(":results") if isinstance(entry.get(":results"), dict) else {}
    tests = results.get("tests") or results.get(":tests") or []
    tests = tests[:MAX_TESTS] if isinstance(tests, list) else []
    return _number(entry.get(":score")), {_text(t.get("name")).split(":")[0]: _number(t.get("score"))
                                          for t in tests if isinstance(t, dict)}


def _reduced(found) -> dict:
    if not isinstance(found, dict):
        return {"error": "it is not a mapping of submission folders"}
    if len(found) > MAX_ENTRIES:
        return {"error": f"it lists {len(found)} submissions; at most {MAX_ENTRIES} are read"}
    entries = []
    for folder, entry in sorted(found.items(), key=lambda item: str(item[0])):
        shown = plain_text(str(folder))
        score, tests = _scores(entry)
        entries.append({"folder": str(folder), "students": _students(entry), "score": score, "tests": tests,
                        "problem": _problem(shown, entry), "too_many": _too_many(shown, entry)})
    return {"entries": entries}


def _child(path: str) -> dict:
    import yaml

    sys.setrecursionlimit(MAX_DEPTH * 8)  # the composer's and constructor's frames per level of nesting
    try:
        with open(path, encoding="utf-8") as f:
            found = yaml.load(f, Loader=_loader()) or {}  # noqa: S506 - BaseLoader: every scalar a string
    except RecursionError:
        return {"error": f"it nests deeper than {MAX_DEPTH} levels (an edited or crafted file)"}
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        return {"error": f"it is not valid YAML: {plain_text(str(err))[:300]}"}
    return _reduced(found)


def _printed(found: dict) -> str:
    text = json.dumps(found)
    if len(text) > MAX_PRINTED:  # aliases: one list of submitters named by every entry is read once per entry
        return json.dumps({"error": f"its entries come to more than {MAX_PRINTED >> 20} MB once read (a list named "
                                    "again and again through YAML aliases?)"})
    return text


if __name__ == "__main__":
    try:
        print(_printed(_child(sys.argv[1])))
    except MemoryError:
        print(json.dumps({"error": f"reading it took more than {MEMORY >> 30} GB"}))
