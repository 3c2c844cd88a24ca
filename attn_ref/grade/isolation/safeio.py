"""File operations on the trusted side that never follow a path the student's kernel could have planted.

The rule (docs/security.md): the grader creates every folder the kernel may write, fresh, inside a
folder only the grader can write; it writes the kernel's inputs before handing a folder over; and it
reads what the kernel wrote through a descriptor of that folder, without following links, without
blocking (a FIFO), and only from a regular file owned by the kernel with one link (no hard link to a
root-only file) and of bounded size.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from ..inkernel.errors import GraderError

REPLY_LIMIT = 64 << 20  # no single reply file is larger than this


class UnsafeReply(GraderError, ValueError):
    """A file the kernel left that is not a plain, small, private file of its own."""


def make_private_dir(parent: Path, name: str, mode: int = 0o711) -> Path:
    """A fresh folder owned by the grader (the kernel may pass through it, not list or change it)."""
    path = parent / name
    os.mkdir(path, 0o700)  # fails if anything is there already; the parent is the grader's
    os.chmod(path, mode)
    return path


MEMORY = "/dev/shm"


def memory_folder() -> str | None:
    """The machine's shared folder in memory (/dev/shm) where this user may make folders in it, else None."""
    usable = os.path.isdir(MEMORY) and not os.path.islink(MEMORY) and os.access(MEMORY, os.W_OK | os.X_OK)
    return MEMORY if usable else None


def in_memory_tempdir(prefix: str) -> Path:
    """A fresh folder of the grader's alone (0700), in memory (/dev/shm) where the machine has it: for trusted
    helpers that write and read a handful of small files per call (the mutants' and the sweep's runners),
    where on a disk opening them costs a tenth of the call."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=memory_folder()))


def make_kernel_dir(parent: Path, name: str, uid: int | None, gid: int | None) -> Path:
    """A fresh folder the kernel may write: made by the grader in its own folder, then handed over."""
    path = parent / name
    os.mkdir(path, 0o700)
    if uid is not None and uid != os.geteuid():
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchown(fd, uid, gid)
        finally:
            os.close(fd)
    return path


def write_new(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Create a new file (never an existing one, never through a link) in a folder the grader owns."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def read_reply(folder: Path, name: str, owner: int | None = None, limit: int = REPLY_LIMIT) -> bytes:
    """The bytes of ``folder/name``, a file the kernel wrote; UnsafeReply for anything but a plain file.

    ``owner``: the kernel's uid; the file must belong to it (a hard link to another user's file does not).
    """
    if "/" in name or name in ("", ".", ".."):
        raise UnsafeReply(f"a reply named {name[:40]!r}, outside its folder")
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        except OSError as err:  # ELOOP: a symbolic link; ENXIO: a socket
            raise UnsafeReply(f"{name} is not a plain file ({err.strerror})") from None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeReply(f"{name} is not a plain file")
        if info.st_nlink != 1:
            raise UnsafeReply(f"{name} has other names (a hard link)")
        if owner is not None and info.st_uid != owner:
            raise UnsafeReply(f"{name} does not belong to the kernel's user")
        if info.st_size > limit:
            raise UnsafeReply(f"{name} is larger than {limit >> 20} MB")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnsafeReply(f"{name} is larger than {limit >> 20} MB")
    return data


def is_kernel_socket(path: Path, owner: int | None) -> bool:
    """A Unix socket the kernel made (checked with lstat: a link is refused), owned by ``owner`` where given,
    with no group or other bits (no other uid may connect), before the grader connects."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISSOCK(info.st_mode) and not info.st_mode & 0o077
            and (owner is None or info.st_uid == owner))


def lock_dir(path: Path, mode: int = 0o711) -> None:
    """Take a folder back from the kernel: owned by the grader, ``mode`` (its entries can no longer change)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        if os.geteuid() == 0:
            os.fchown(fd, 0, 0)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def remove_tree(name: str | os.PathLike, dir_fd: int | None = None) -> None:
    """Remove a tree the kernel may have written, however deep, never following a link in it.

    ``rm -rf`` walks with descriptors and without recursion (Python 3.11's ``shutil.rmtree`` recurses once
    per level, so a kernel's folder 3,000 levels deep raised RecursionError in the grader); it removes a
    link itself, never what it points to, and ``--one-file-system`` keeps it off any mount inside. With
    ``dir_fd``, ``name`` is taken relative to that open folder (the folder is never looked up by path)."""
    path = os.fspath(name) if dir_fd is None else f"/proc/self/fd/{dir_fd}/{os.fspath(name)}"
    _remove_trees([path], [os.fspath(name)], dir_fd)


def keep_reply(folder: Path, names: list[str], owner: int | None) -> dict[str, bytes | Exception]:
    """Files of a reply in memory, read as read_reply reads them (each one's bytes, or what reading it raised), for a
    folder about to be removed: a call that replied before its kernel ended is still read, in full, afterwards."""
    files: dict[str, bytes | Exception] = {}
    for name in names:
        try:
            files[name] = read_reply(folder, name, owner=owner)
        except (UnsafeReply, OSError) as err:
            files[name] = err
    return files


def read_kept(files: dict[str, bytes | Exception], name: str) -> bytes:
    """A file of a reply kept by keep_reply: its bytes, or what reading it raised then (FileNotFoundError: none)."""
    found = files.get(name)
    if found is None:
        raise FileNotFoundError(name)
    if isinstance(found, Exception):
        raise found
    return found


def remove_contents(folder: Path) -> None:
    """Remove every entry of a folder the grader owns (its entries the grader's, their insides maybe the kernel's),
    as ``remove_tree`` does, in one `rm`; the folder stays."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    if names:
        paths = [os.path.join(folder, name) for name in names]
        _remove_trees(paths, paths, None)


def _remove_trees(paths: list[str], names: list[str], dir_fd: int | None) -> None:
    """``rm -rf --one-file-system`` of ``paths``; without rm, the standard library's walk of ``names`` (relative to
    ``dir_fd`` where given), which cannot follow links either."""
    try:
        subprocess.run(["rm", "-rf", "--one-file-system", "--", *paths], pass_fds=() if dir_fd is None else (dir_fd,),
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        for name in names:
            try:
                shutil.rmtree(name, dir_fd=dir_fd, ignore_errors=True)
            except RecursionError:
                pass

