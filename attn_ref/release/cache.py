"""The build's cache: a piece of a release (an assignment's notebooks, its check) kept under a hash of all it
depends on, and reused by the next build whose hash matches, into any --out.

    notebooks   the student and solution folders of one assignment: otter assign and the solution's run
    check       one assignment's `attn-ref check` that passed: its rows and its versions report

A key hashes every input of the piece, never a guess at which inputs matter: the assignment's folder, the course
registry's entry, every file of the attn_ref package, the locks, and the name and version of every package of the
build's environment (the solution runs there); a check adds its zip, notebooks and seed-sweep record, and the
students' environment its kernels run. Whatever a key misses would be a wrong proof, so tests change each input
and see the piece made again, and a build with the cache cold is byte-identical to one with it warm.

The cache lives with the course, in `<course>/.attn-ref-cache/` (ignored by git: a fresh clone has none, so its
first build verifies everything), or in $ATTN_REF_CACHE; ATTN_REF_CACHE=off turns it off. Each entry is a folder,
written whole under a temporary name and renamed into place, so a reader sees an entry whole or not at all.
`attn-ref check` never reads it: it re-verifies a release every time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

FORMAT = 1
ENVIRONMENT = "ATTN_REF_CACHE"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # attn_ref/
SKIPPED = ("__pycache__",)


FOLDER = ".attn-ref-cache"


def root(course: Path) -> Path | None:
    """The cache's folder for a course, or None where ATTN_REF_CACHE=off."""
    chosen = os.environ.get(ENVIRONMENT, "")
    if chosen.lower() == "off":
        return None
    return Path(chosen) if chosen else Path(course) / FOLDER


def folder_digest(folder: Path, leave_out: tuple[str, ...] = ()) -> str:
    """Every file under ``folder`` by its relative path and bytes (``leave_out``: names of files and folders not
    hashed; compiled Python never is)."""
    digest = hashlib.sha256()
    folder = Path(folder)
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if not path.is_file() or any(p in leave_out or p in SKIPPED for p in parts) or path.suffix == ".pyc":
            continue
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def environment() -> list[str]:
    """The build's interpreter and every package installed beside it, by name and version."""
    packages = sorted({f"{d.metadata['Name'].lower()}=={d.version}" for d in importlib.metadata.distributions()
                       if d.metadata["Name"]})
    return [sys.version, platform.machine(), *packages]


def student_environment() -> list[str]:
    """The students' interpreter that the check's kernels run, and the packages installed beside it."""
    from ..grade.isolation.sandbox import default_student_python

    python = os.environ.get("ATTN_REF_KERNEL_PYTHON") or default_student_python()
    if python is None:
        return ["none"]
    prefix = Path(python).parent.parent
    installed = sorted(p.name for p in prefix.glob("lib/python*/site-packages/*.dist-info"))
    return [str(python), *installed]


def key(*parts) -> str:
    """The hash of ``parts`` (JSON values), with the cache's format."""
    return hashlib.sha256(json.dumps([FORMAT, *parts], sort_keys=True).encode()).hexdigest()


def load(course: Path, kind: str, entry_key: str) -> tuple[dict, Path] | None:
    """(what was stored beside the files, the entry's folder of files) for a key, or None."""
    base = root(course)
    if base is None:
        return None
    entry = base / kind / entry_key
    try:
        meta = json.loads((entry / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return meta, entry / "files"


def store(course: Path, kind: str, entry_key: str, meta: dict, files: dict[str, Path]) -> None:
    """Keep ``files`` ({relative path: file or folder to copy}) and ``meta`` under the key; a failure to write
    the cache never fails a build (the entry is then missing, and the piece is made again next time)."""
    base = root(course)
    if base is None:
        return
    target = base / kind / entry_key
    staging: Path | None = None
    try:
        (base / kind).mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{entry_key[:12]}-", dir=base / kind))
        for relative, source in files.items():
            destination = staging / "files" / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            if Path(source).is_dir():
                shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(source, destination)
        (staging / "meta.json").write_text(json.dumps(meta, sort_keys=True))
        if target.exists():
            shutil.rmtree(staging)  # another build stored it meanwhile: the same bytes under the same key
            return
        staging.rename(target)
    except OSError:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
