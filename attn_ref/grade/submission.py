"""Find and read the one notebook of a submission: a .ipynb, a grader.export() zip, or a folder.

Only the notebook is taken; every other file (.OTTER_LOG included) is ignored.
"""

from __future__ import annotations

import io
import os
import stat
import warnings
import zipfile
from pathlib import Path

import nbformat
from nbformat.warnings import DuplicateCellId, MissingIDFieldWarning

from .inkernel.errors import GraderError
from .inkernel.text import encodable, plain_text
from .isolation.kernel import KERNEL_NAME

MAX_NOTEBOOK = 64 << 20  # a notebook's bytes (honest ones embed plots), checked before it is read or unpacked
MAX_ZIP = 4 * MAX_NOTEBOOK  # a submission zip's bytes: the largest file a submission is read from
MAX_ARCHIVE_MEMBERS = 10_000
MAX_FOLDER_ENTRIES = 10_000
MAX_FOLDER_DEPTH = 64  # folders below a submission: a real one nests a few; 2,000 pass the longest path the system takes


class SubmissionError(GraderError):
    """A submission that cannot be graded; the message is shown to the student and the TA (as plain text:
    it may quote names the student chose)."""

    def __init__(self, message: str):
        super().__init__(plain_text(message))


def _too_large(where: str, size: int) -> SubmissionError:
    return SubmissionError(f"{where} is {size >> 20} MB; a notebook may be at most {MAX_NOTEBOOK >> 20} MB "
                           "(clear large outputs and submit again)")


def _read(data: bytes, where: str) -> nbformat.NotebookNode:
    if not data.strip():  # a save that never finished, or an upload of nothing: said plainly, not as bad JSON
        raise SubmissionError(f"{where} is empty ({len(data)} bytes): no notebook was saved in it")
    try:
        with warnings.catch_warnings():  # nbformat gives cells their missing or duplicated ids; its warning of that,
            warnings.simplefilter("ignore", DuplicateCellId)  # a line per cell on each read, would flood the TA's
            warnings.simplefilter("ignore", MissingIDFieldWarning)  # console about a notebook graded as it is
            nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:  # NotJSONError, UnicodeDecodeError, RecursionError, validation failures
        raise SubmissionError(f"{where} is not a readable Jupyter notebook ({type(err).__name__})") from None
    if not isinstance(nb.get("cells"), list):
        raise SubmissionError(f"{where} has no cells")
    for cell in nb.cells:  # the sources reach files, pages and the report: they must encode as UTF-8
        if isinstance(cell, dict) and isinstance(cell.get("source"), str):
            cell["source"] = encodable(cell["source"])
    return nb


def is_notebook_or_zip(path: Path) -> bool:
    """Whether a file's name says it is a notebook or a zip, its case aside (Windows and email clients save
    ``Ada.IPYNB``)."""
    return path.suffix.lower() in (".ipynb", ".zip")


def _one(names: list[str], where: str) -> str:
    if not names:
        raise SubmissionError(f"no notebook (.ipynb) found in {where}")
    if len(names) > 1:
        raise SubmissionError(f"several notebooks in {where}: {', '.join(sorted(names))}; submit exactly one")
    return names[0]


def _is_notebook(name: str) -> bool:
    parts = Path(name).parts
    return name.endswith(".ipynb") and not any(p.startswith((".", "__MACOSX")) for p in parts)


def _from_zip(data: bytes, where: str) -> tuple[nbformat.NotebookNode, str]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except Exception:  # noqa: BLE001 - BadZipFile, and what odd headers make the reader raise: the bytes are the student's
        raise SubmissionError(f"{where} is not a valid zip file") from None
    members = archive.infolist()
    if len(members) > MAX_ARCHIVE_MEMBERS:
        raise SubmissionError(f"{where} holds more than {MAX_ARCHIVE_MEMBERS} files")
    name = _one([m.filename for m in members if _is_notebook(m.filename)], where)
    size = archive.getinfo(name).file_size
    if size > MAX_NOTEBOOK:  # checked before unpacking: a small zip can hold a huge notebook
        raise _too_large(f"{where}:{name}", size)
    try:
        with archive.open(name) as member:
            data = member.read(MAX_NOTEBOOK + 1)
    except Exception as err:  # noqa: BLE001 - a bad CRC, a size that lies, encryption, a compression not read here
        raise SubmissionError(f"{where}:{name} cannot be unpacked ({type(err).__name__}): the zip is damaged, "
                              "encrypted or compressed in a way this grader does not read; export it again") from None
    if len(data) > MAX_NOTEBOOK:
        raise _too_large(f"{where}:{name}", len(data))
    return _read(data, f"{where}:{name}"), Path(name).name


def load(path: str | Path) -> tuple[nbformat.NotebookNode, str]:
    """(notebook, file name) of a submission; raises SubmissionError with a plain reason."""
    path = Path(path)
    if path.is_dir():
        entries = _walk(path)
        notebooks = [p for p in entries if p.suffix == ".ipynb" and _is_notebook(str(p.relative_to(path)))]
        zips = [p for p in entries if p.suffix == ".zip" and not p.name.startswith(".")]
        if not notebooks and len(zips) == 1:
            return _from_zip(_bounded_read(zips[0], MAX_ZIP), zips[0].name)
        found = _one([str(p.relative_to(path)) for p in notebooks], f"the folder {path.name}")
        return _read(_bounded_read(path / found, MAX_NOTEBOOK), found), Path(found).name
    if not path.exists():
        raise SubmissionError(f"{path} does not exist")
    if path.suffix.lower() == ".zip":
        return _from_zip(_bounded_read(path, MAX_ZIP), path.name)
    return _read(_bounded_read(path, MAX_NOTEBOOK), path.name), path.name


def files(folder: Path, limit: int = MAX_FOLDER_ENTRIES) -> tuple[list[Path], bool]:
    """The regular files under ``folder`` in a fixed order (no link followed), at most ``limit`` of them and none
    deeper than MAX_FOLDER_DEPTH folders, and whether there were more (a folder 2,000 deep passes the system's
    longest path: walking it raised, and its class folder read as holding no notebook). An unreadable folder
    raises OSError."""
    found, stack = [], [(Path(folder), 0)]
    while stack:
        here, depth = stack.pop()
        for entry in sorted(os.scandir(here), key=lambda e: e.name):
            if len(found) >= limit:
                return found, True
            if entry.is_dir(follow_symlinks=False):
                if depth >= MAX_FOLDER_DEPTH:
                    return found, True
                stack.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    return found, False


def _walk(folder: Path) -> list[Path]:
    """Files under a submission folder (no links followed), at most MAX_FOLDER_ENTRIES of them."""
    found, more = files(folder)
    if more:
        raise SubmissionError(f"the folder {folder.name} holds more than {MAX_FOLDER_ENTRIES} files, or folders more "
                              f"than {MAX_FOLDER_DEPTH} deep")
    return found


def _bounded_read(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file, its size checked before a byte is read; a FIFO, socket or
    device is refused without waiting on it (opened non-blocking, then checked on what was opened)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # an OSError (no permission) is not the student's
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError(f"{path.name} is not a regular file (a FIFO, socket or device is never read)")
        if info.st_size > limit:
            raise _too_large(path.name, info.st_size)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise _too_large(path.name, len(data))
    return data


def check_assignment(nb: nbformat.NotebookNode, expected: str) -> None:
    """The notebook must belong to this assignment (otter writes the name into its metadata)."""
    name = nb.metadata.get("otter", {}).get("assignment_name")
    if name is None:
        raise SubmissionError(f"this notebook has no assignment name; download the {expected!r} notebook again and copy your answers in")
    if name != expected:
        raise SubmissionError(f"this notebook is for the assignment {name!r}, not {expected!r}")
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel not in (None, KERNEL_NAME):
        warnings.warn(f"the notebook names kernel {kernel!r}; grading uses {KERNEL_NAME!r}", stacklevel=2)
