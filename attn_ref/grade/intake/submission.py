"""Find and read the one notebook of a submission: a .ipynb, a grader.export() zip, or a folder.

Only the notebook is taken; every other file (.OTTER_LOG included) is ignored. Files are opened without
following links and refused unless regular; a zip is read in place (never into memory whole), checked by
zips.open_checked, and its notebook inflated with zips' bounds; the notebook is read by notebook.read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import zips
from .errors import SubmissionError
from .notebook import MAX_NOTEBOOK, Notebook, too_large
from .notebook import read as read_notebook

MAX_ZIP = 4 * MAX_NOTEBOOK  # a submission zip's bytes: the largest file a submission is read from
MAX_ARCHIVE_MEMBERS = 10_000
MAX_FOLDER_ENTRIES = 10_000
MAX_FOLDER_DEPTH = 64  # folders below a submission: a real one nests a few; 2,000 pass the longest path the system takes


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


def _is_visible(name: str) -> bool:
    """Not inside a hidden folder nor macOS's __MACOSX, and not hidden itself."""
    return not any(p.startswith((".", "__MACOSX")) for p in Path(name).parts)


def _is_notebook(name: str) -> bool:
    return name.endswith(".ipynb") and _is_visible(name)


def _from_zip(file, where: str) -> tuple[Notebook, str]:
    with zips.open_checked(file, where, SubmissionError, MAX_ARCHIVE_MEMBERS) as archive:
        members = archive.infolist()
        if len(members) > MAX_ARCHIVE_MEMBERS:
            raise SubmissionError(f"{where} holds more than {MAX_ARCHIVE_MEMBERS} files")
        name = _one([m.filename for m in members if _is_notebook(m.filename)], where)
        member = archive.getinfo(name)
        if member.file_size > MAX_NOTEBOOK:  # checked before unpacking: a small zip can hold a huge notebook
            raise too_large(f"{where}:{name}", member.file_size)
        if why := zips.bomb(member):
            raise SubmissionError(f"{where}: {why.removeprefix('its ')}; export it again")
        try:
            data = bytearray()  # grown in place: a list of chunks joined would hold the notebook twice
            for chunk in zips.chunks(archive, member, MAX_NOTEBOOK):
                data += chunk
        except ValueError as err:  # inflated past what its sizes allow
            raise SubmissionError(f"{where}: {str(err).removeprefix('its ')}; export it again") from None
        except Exception as err:  # noqa: BLE001 - a bad CRC, a size that lies, encryption, a compression not read here
            raise SubmissionError(f"{where}:{name} cannot be unpacked ({type(err).__name__}): the zip is damaged, "
                                  "encrypted or compressed in a way this grader does not read; export it again") from None
    return read_notebook(data, f"{where}:{name}"), Path(name).name


def load(path: str | Path) -> tuple[Notebook, str]:
    """(notebook, file name) of a submission; raises SubmissionError with a plain reason."""
    path = Path(path)
    if path.is_dir():
        entries = _walk(path)
        notebooks = [p for p in entries if p.suffix == ".ipynb" and _is_notebook(str(p.relative_to(path)))]
        zipped = [p for p in entries if p.suffix == ".zip" and _is_visible(str(p.relative_to(path)))]
        if not notebooks and len(zipped) == 1:
            return _zip_file(zipped[0], zipped[0].name)
        if not notebooks and len(zipped) > 1:
            raise SubmissionError(f"several zips and no notebook in the folder {path.name}: "
                                  f"{', '.join(sorted(p.name for p in zipped)[:5])}; submit exactly one")
        found = _one([str(p.relative_to(path)) for p in notebooks], f"the folder {path.name}")
        return read_notebook(_bounded_read(path / found, MAX_NOTEBOOK), found), Path(found).name
    if not path.exists():
        raise SubmissionError(f"{path} does not exist")
    if path.suffix.lower() == ".zip":
        return _zip_file(path, path.name)
    return read_notebook(_bounded_read(path, MAX_NOTEBOOK), path.name), path.name


def _zip_file(path: Path, where: str) -> tuple[Notebook, str]:
    with _opened(path, MAX_ZIP) as file:
        return _from_zip(file, where)


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


def _opened(path: Path, limit: int):
    """A regular file of at most ``limit`` bytes, open for reading; a FIFO, socket or device is refused without
    waiting on it (opened non-blocking, then checked on what was opened)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # an OSError (no permission) is not the student's
    file = os.fdopen(fd, "rb")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        file.close()
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError(f"{path.name} is not a regular file (a FIFO, socket or device is never read)")
        raise too_large(path.name, info.st_size)
    return file


def _bounded_read(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file (``_opened``), its size checked before a byte is read."""
    with _opened(path, limit) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise too_large(path.name, len(data))
    return data


def check_assignment(nb: Notebook, expected: str) -> None:
    """The notebook must belong to this assignment (otter writes the name into its metadata)."""
    name = nb.assignment_name
    if name is None:
        raise SubmissionError(f"this notebook has no assignment name; download the {expected!r} notebook again and "
                              "copy your answers in")
    if name != expected:
        raise SubmissionError(f"this notebook is for the assignment {name!r}, not {expected!r}")
