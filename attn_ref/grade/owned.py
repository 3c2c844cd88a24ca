"""What the grader writes for its owner (the TA, or root on Gradescope) is its owner's alone: folders 0700 and
files 0600, set explicitly, whatever the umask. Results, gradebooks, pages and an unpacked export name
students and hold their work; without namespaces a kernel of another uid sees this machine's files (and,
on a shared machine, so does every other user), so none of it may be readable by anyone else.

A kernel's own inputs are not written here: the jail gives them the modes that kernel needs (session.py).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> Path:
    """``path`` as a folder only its owner can enter: made (with every missing parent, each 0700) or, where it
    exists, set to 0700. Raises where it is not a folder (a file, or a link to one)."""
    path = Path(path)
    missing = []
    for folder in (path, *path.parents):
        if folder.exists() or folder.is_symlink():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:  # another run made it in between: it is set below, or by that run
            pass
        os.chmod(folder, FOLDER_MODE)  # the umask may have taken bits away; never added any
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    os.chmod(path, FOLDER_MODE)
    return path


def write_private(path: Path, data: bytes) -> None:
    """Readers see the old file or the new one, never half of one (a killed run leaves only a .part); the file
    is 0600 before a byte is in it, and a missing parent is made 0700 (an existing one is left as it is:
    Gradescope's /autograder/results is Gradescope's)."""
    path = Path(path)
    if not path.parent.is_dir():
        private_folder(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".part")  # 0600 by mkstemp
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), FILE_MODE)
        f.write(data)
    os.replace(tmp, path)


def open_private(path: Path) -> int:
    """A descriptor on ``path`` for reading and writing (a lock file), made 0600 if new; never through a link."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def tighten(folder: Path, names: tuple[str, ...]) -> None:
    """Make what an earlier run (or an older grader) left under ``folder`` the owner's alone: the entries
    ``names`` and, for those that are folders, everything inside them (no link is followed). Only what the
    grader writes is touched: ``--out`` may be a folder that holds other things of the TA's."""
    for name in names:
        top = Path(folder) / name
        if not top.exists() or top.is_symlink():
            continue
        stack = [top]
        while stack:
            path = stack.pop()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                continue
            if stat.S_ISDIR(mode):
                os.chmod(path, FOLDER_MODE)
                stack.extend(path.iterdir())
            elif mode & 0o077:
                os.chmod(path, FILE_MODE)
