"""Finding a class's submissions: a folder of notebooks, zips or folders, or Gradescope's "Export
Submissions" (zip or unpacked, with submission_metadata.yml naming each submission's students)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..autograder import AutograderError

METADATA = "submission_metadata.yml"


@dataclass
class Submission:
    key: str  # unique, file-name safe: names results/<key>.json
    path: Path
    students: list[dict] = field(default_factory=list)  # {"name", "sid", "email"} from Gradescope
    problem: str = ""  # a reason it cannot be graded at all, found while listing
    gradescope: dict = field(default_factory=dict)  # what the export says Gradescope scored: {"score", "tests"}
    from_export: bool = False  # listed by a Gradescope export: ``students`` is the platform's list of its submitters


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


def is_gradescope_export(path: Path) -> bool:
    if path.is_dir():
        return (path / METADATA).is_file()
    if path.suffix == ".zip" and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return any(Path(n).name == METADATA for n in archive.namelist())
    return False


def is_batch(path: Path) -> bool:
    """A class (folder of submissions or Gradescope export), not one submission."""
    return is_gradescope_export(path) or (path.is_dir() and any(
        p.suffix in (".ipynb", ".zip") or p.is_dir() for p in path.iterdir() if not p.name.startswith(".")))


def _unpack_export(path: Path, out: Path) -> Path:
    """A Gradescope export zip, unpacked once under OUT/.export/<its hash>/ (kept for regrades)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    target = out / ".export" / digest
    if not (target / ".complete").exists():
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                name = Path(member.filename)
                if name.is_absolute() or ".." in name.parts:
                    continue  # never write outside the target
                archive.extract(member, target)
        (target / ".complete").touch()
    metadata = next(target.rglob(METADATA))
    return metadata.parent


def _students(entry) -> list[dict]:
    submitters = (entry or {}).get(":submitters") or []
    return [{"name": str(s.get(":name", "")), "sid": str(s.get(":sid", "") or ""), "email": str(s.get(":email", "") or "")}
            for s in submitters if isinstance(s, dict)]


def _number(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _gradescope_scores(entry) -> dict:
    """The export's own scores for a submission: its total, and per test where its results are included."""
    entry = entry if isinstance(entry, dict) else {}
    found = {"score": _number(entry.get(":score"))}
    results = entry.get(":results") if isinstance(entry.get(":results"), dict) else {}
    tests = results.get("tests") or results.get(":tests") or []
    found["tests"] = {str(t.get("name", "")).split(":")[0]: _number(t.get("score")) for t in tests if isinstance(t, dict)}
    return found


def _has_notebook(folder: Path) -> bool:
    return any(p.suffix in (".ipynb", ".zip") for p in folder.rglob("*") if p.is_file())


def discover(path: Path, out: Path) -> list[Submission]:
    path = Path(path)
    if path.is_file() and is_gradescope_export(path):
        path = _unpack_export(path, out)
    if (path / METADATA).is_file():
        import yaml  # only TAs' exports need it; Gradescope's grader environment does without

        try:  # every scalar a string: an unquoted SID such as 00123 stays 00123 (YAML 1.1 reads it as octal)
            metadata = yaml.load((path / METADATA).read_text(encoding="utf-8"), Loader=yaml.BaseLoader) or {}
        except yaml.YAMLError as err:
            raise AutograderError(f"{path / METADATA} is not valid YAML: {err}") from None
        found = []
        for folder, entry in sorted(metadata.items()):
            sub = Submission(_safe(str(folder)), path / str(folder), _students(entry), gradescope=_gradescope_scores(entry),
                             from_export=True)
            if not sub.path.is_dir():
                sub.problem = f"the export lists {folder} but has no such folder"
            found.append(sub)
        return found
    found, seen = [], set()
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(".") or not (entry.is_dir() or entry.suffix in (".ipynb", ".zip")):
            continue
        if entry.is_dir() and not _has_notebook(entry):
            continue  # not a submission (notes, caches): `skipped` lists it
        key = _safe(entry.stem if entry.is_file() else entry.name)
        while key in seen:
            key += "_"
        seen.add(key)
        found.append(Submission(key, entry))
    return found


def skipped(path: Path) -> list[str]:
    """Folders of a plain class folder that hold no notebook, so are not graded (printed for the TA)."""
    path = Path(path)
    if not path.is_dir() or (path / METADATA).is_file():
        return []
    return sorted(e.name for e in path.iterdir() if e.is_dir() and not e.name.startswith(".") and not _has_notebook(e))


def content_hash(path: Path) -> str:
    """A submission's files, names and bytes: a results file graded from the same ones need not be graded again."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(os.fsencode(file.relative_to(path) if path.is_dir() else file.name) + b"\0")  # any bytes
        digest.update(file.read_bytes() if file.is_file() else b"")
    return digest.hexdigest()


def already_graded(results_path: Path, content_digest: str, version: str) -> bool:
    """Whether these results stand for this submission and autograder; results with no grade (the grader
    or its kernel failed) never do, so a rerun tries again instead of keeping the hole."""
    from ..results import CONTENT_HASH, Outcome, outcome, recorded_hash

    try:
        results = json.loads(results_path.read_text())
        extra = results["extra_data"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if not isinstance(extra, dict) or outcome(results) is Outcome.NOT_GRADED:
        return False
    return recorded_hash(extra, CONTENT_HASH) == content_digest and extra.get("autograder_version") == version


# ---- the class ---------------------------------------------------------------------------------------
