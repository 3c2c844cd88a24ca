"""Ending what a kernel leaves behind: its processes, its files in shared folders, its SysV IPC; and a
guard on the disk it fills. Linux only where it matters (/proc); elsewhere only descendants are ended.

As root the kernel has a uid of its own, so nothing of it can outrun the end: kill(-1, SIGKILL) sent from
a process running as that uid reaches all of them in one pass (a fork racing it aborts), repeated until
none is left, zombies reaped in between.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import itertools
import os
import pwd
import random
import re
import secrets
import signal
import stat
import tempfile
import time
from pathlib import Path

import psutil

from .safeio import memory_folder, remove_tree

UID_RANGE_ENV = "ATTN_REF_UID_RANGE"  # "first-last"
DEFAULT_UID_RANGE = (61000, 64999)  # above login.defs' UID_MAX, below nobody, inside a container's mapping
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")
SCAN_LIMIT = 50_000  # entries visited per scan of the shared folders
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1


# ---- uids --------------------------------------------------------------------------------------------

class UidClaim:
    """A uid held for one submission: a lock no other grader on this machine can take meanwhile."""

    def __init__(self, uid: int, fd: int):
        self.uid, self._fd = uid, fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _uid_range() -> tuple[int, int]:
    text = os.environ.get(UID_RANGE_ENV, "")
    try:
        first, last = (int(x) for x in text.split("-"))
        if 0 < first <= last:
            return first, last
    except ValueError:
        pass
    return DEFAULT_UID_RANGE


def _lock_dir() -> Path:
    """A folder only root can write, for the uid locks (checked: not a link, root's, mode 0700)."""
    for parent in ("/run", "/var/lib", tempfile.gettempdir()):
        path = Path(parent) / "attn-ref-uids"
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and info.st_mode & 0o077 == 0:
            return path
    raise OSError("no safe folder for the kernel uid locks (/run/attn-ref-uids is not root's)")


def count_processes(uid: int) -> int:
    count = 0
    for p in psutil.process_iter(["uids"]):
        uids = p.info["uids"]
        if uids and uid in (uids.real, uids.effective, uids.saved):
            count += 1
    return count


def count_tasks(uid: int) -> int:
    """The threads of every process whose real uid is ``uid``: what RLIMIT_NPROC counts (a kernel's zmq and
    ipykernel threads too), so a kernel of the user's own uid gets its headroom on top of these."""
    count = 0
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if p.uids().real == uid:
                count += p.num_threads()
    return count


def claim_uid() -> UidClaim:
    """A fresh uid: no passwd entry, no process, not held by another grading; its old leftovers removed."""
    first, last = _uid_range()
    known = {entry.pw_uid for entry in pwd.getpwall()}
    busy = set()
    for p in psutil.process_iter(["uids"]):
        if p.info["uids"]:
            busy.update(p.info["uids"])
    busy |= uids_with_keys()  # a key outlives the processes that made it: the next kernel of that uid would find it
    candidates = [uid for uid in range(first, last + 1) if uid not in known and uid not in busy]
    random.shuffle(candidates)
    folder = _lock_dir()
    for uid in candidates[:500]:
        fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if count_processes(uid):  # something of it lives (a zombie too): never reuse it
            os.close(fd)
            continue
        remove_uid_leftovers(uid)
        return UidClaim(uid, fd)
    raise OSError(f"no free kernel uid in {first}-{last} (set {UID_RANGE_ENV})")


def uids_with_keys() -> set[int]:
    """The uids that own keys in the OS kernel's keyrings now (/proc/key-users: "uid: usage nkeys/nikeys ...")."""
    found = set()
    try:
        with open("/proc/key-users") as f:
            for line in f:
                uid, _, rest = line.partition(":")
                fields = rest.split()
                if uid.strip().isdigit() and len(fields) > 1 and fields[1].split("/")[0] != "0":
                    found.add(int(uid))
    except OSError:  # no keyrings here (or not Linux): nothing to outlive a kernel
        pass
    return found


# ---- processes ---------------------------------------------------------------------------------------

def become_subreaper() -> bool:
    """Orphans of the kernel (double fork, setsid) re-parent to this process, so they can be reaped."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent: int) -> None:
    """SIGTERM when ``parent`` dies (a Dask worker killed mid-grading: its grader then ends its kernels; a
    supervisor killed outright: its grading processes end, and their kernels' launchers end the kernels)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def make_undumpable() -> None:
    """No same-user process may read this one's memory or environment (defence in depth only)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def child_pids() -> set[int]:
    """This process's children: read from /proc/self/task/*/children where the kernel offers it (one small
    file per thread, not a walk of every process on the machine), else found by psutil."""
    try:
        found: set[int] = set()
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                found.update(int(pid) for pid in f.read().split())
        return found
    except (OSError, ValueError):
        pass
    try:
        return {p.pid for p in psutil.Process().children()}
    except psutil.Error:
        return set()


def reap_zombies(spare: set[int] = frozenset()) -> None:
    """Collect exited children (orphans re-parented here), except ``spare`` (waited for by their owners)."""
    for pid in child_pids() - set(spare):
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                os.waitpid(pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError, OSError):
            pass


def _kill_all_as(uid: int) -> None:
    """kill(-1, SIGKILL) from a child running as ``uid``: one pass reaches every process of it (a fork
    racing the pass aborts). kill(-1) succeeds while any other process exists, so it says nothing about
    what is left; the caller looks."""
    pid = os.fork()
    if pid == 0:  # the child only makes system calls, then leaves
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for _ in range(3):
                os.kill(-1, signal.SIGKILL)
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(0)
    os.waitpid(pid, 0)


def pid_namespace(pid: int) -> str | None:
    """The PID namespace a process lives in (its /proc link, such as 'pid:[4026532258]'), or None."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def living_processes(uid: int) -> list[psutil.Process]:
    """Processes of ``uid`` that are not zombies (real, effective or saved uid)."""
    found = []
    for p in psutil.process_iter(["uids", "status"]):
        uids = p.info["uids"]
        if uids and uid in (uids.real, uids.effective, uids.saved) and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def end_processes(uid: int | None, before: set[int], spare: set[int] = frozenset(), timeout: float = 5.0) -> int:
    """End the kernel's processes: as root every process of its own ``uid`` (kill(-1) from that uid until
    none is left); otherwise the descendants of this process that did not exist ``before`` (and are not
    ``spare``). Zombies that came back to this process are reaped. Returns how many were ended."""
    victims: set[int] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if uid is not None:
            if not count_processes(uid):  # zombies too: they come back here and are reaped
                break
            alive = [p.pid for p in living_processes(uid)]
            victims.update(alive)
            if alive:
                _kill_all_as(uid)
        else:
            try:
                found = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.pid not in spare]
            except psutil.Error:
                found = []
            alive = [p for p in found if _alive(p)]
            if not alive:
                break
            victims.update(p.pid for p in alive)
            for p in alive:
                try:
                    p.kill()
                except psutil.Error:
                    pass
        reap_zombies(spare)
        time.sleep(0.005)
    reap_zombies(spare)
    return len(victims)


def _alive(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# ---- files and IPC -----------------------------------------------------------------------------------

def _uid_entries(uid: int):
    """(parent dir fd path, name, is_dir) of every entry of ``uid`` in the shared folders, depth-limited."""
    seen = 0
    stack = [Path(d) for d in SHARED_DIRS if os.path.isdir(d) and not os.path.islink(d)]
    while stack and seen < SCAN_LIMIT:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid == uid:
                yield folder, entry.name, stat.S_ISDIR(info.st_mode), info
            elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:  # another shared folder (/tmp/.X11-unix)
                stack.append(folder / entry.name)


def uid_disk_usage(uid: int) -> tuple[int, int]:
    """(bytes, entries) that ``uid`` holds in the shared folders (top entries; folders of its own in full)."""
    total = count = 0
    for folder, name, is_dir, info in _uid_entries(uid):
        total += info.st_blocks * 512
        count += 1
        if is_dir:
            used, entries = tree_usage(folder / name)
            total, count = total + used, count + entries
    return total, count


def unlinked_open_bytes(pids) -> int:
    """Bytes on disk in files that these processes hold open after deleting them: no walk of a folder finds
    them, and they fill the disk all the same. (memfd files are memory, bounded as memory.)"""
    total, seen = 0, set()
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
                if not target.endswith(" (deleted)") or target.startswith("/memfd:"):
                    continue
                info = os.stat(f"{fd_dir}/{fd}")  # the open file itself
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def tree_usage(path: Path, limit: int = SCAN_LIMIT) -> tuple[int, int]:
    """(bytes, entries) under ``path``, never following links; stops counting at ``limit`` entries."""
    total = count = 0
    stack = [path]
    while stack and count < limit:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            count += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                stack.append(Path(entry.path))
    return total, count


def _remove_entry(folder: Path, name: str, is_dir: bool) -> None:
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        if is_dir:
            remove_tree(name, dir_fd=dir_fd)  # relative to the folder's descriptor: never follows a link
        else:
            os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


IPC_TABLES = {"shm": "shmid", "msg": "msqid", "sem": "semid"}
IPC_RMID = 0


def _ipc_objects(uid: int):
    for table, id_column in IPC_TABLES.items():
        try:
            lines = Path(f"/proc/sysvipc/{table}").read_text().splitlines()
        except OSError:
            continue
        header = lines[0].split() if lines else []
        if id_column not in header or "uid" not in header:
            continue
        # the creator's uid too: the owner can hand an object to another uid (IPC_SET), never its creator
        columns = [header.index(c) for c in ("uid", "cuid") if c in header]
        for line in lines[1:]:
            fields = line.split()
            if len(fields) == len(header) and any(int(fields[c]) == uid for c in columns):
                yield table, int(fields[header.index(id_column)])


def remove_uid_leftovers(uid: int) -> int:
    """Remove what ``uid`` left in shared temporary folders and shared memory, and the SysV IPC objects it
    created or owns."""
    removed = 0
    for folder, name, is_dir, _ in list(_uid_entries(uid)):
        _remove_entry(folder, name, is_dir)
        removed += 1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return removed
    for table, ident in list(_ipc_objects(uid)):
        if table == "shm":
            libc.shmctl(ident, IPC_RMID, None)
        elif table == "msg":
            libc.msgctl(ident, IPC_RMID, None)
        else:
            libc.semctl(ident, 0, IPC_RMID)
        removed += 1
    return removed


# ---- a killed run's folders ------------------------------------------------------------------------------
#
# Each process that makes scratch folders holds a lock file of its own while it lives (flock: released by the
# operating system however the process ends, and seen across PID namespaces, which share the file), and names
# its folders with that lock's token. A later run removes the folders whose lock it can take: their run is gone.

SCRATCH = re.compile(r"attn-ref-(?:grade|image|worker|exchange)-([0-9a-f]{8})-\d+")  # what scratch_folder names
RUN_LOCK = "attn-ref-run-{token}.lock"
_runs: dict[str, tuple[str, int, int]] = {}  # temporary folder -> (token, lock descriptor, the pid that took it)
_made = itertools.count(1)  # scratch folders of this process: short names (a kernel's socket path must stay short)


def _run_token(folder: str) -> str:
    """This run's token in ``folder``: its lock file made and held on first use (0600, never through a link; the
    descriptor is kept across fork, so the grading processes hold it too, and closed on exec)."""
    held = _runs.get(folder)
    if held is not None:
        return held[0]
    while True:  # a token no lock file in ``folder`` has: 8 hex digits, so names stay short (a kernel's socket path
        # lies below them) and, as cgroups are named after a jail's folder, two runs' names differ machine-wide
        token = secrets.token_hex(4)
        try:
            fd = os.open(os.path.join(folder, RUN_LOCK.format(token=token)),
                         os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            break
        except FileExistsError:
            continue
    fcntl.flock(fd, fcntl.LOCK_EX)
    _runs[folder] = (token, fd, os.getpid())
    if len(_runs) == 1:
        atexit.register(release_runs)
    return token


def release_runs() -> None:
    """Remove this process's lock files (not a forked child's: it shares them), once its scratch folders are gone
    (a supervisor's close) or at a normal exit; a folder made after that takes a new token. A folder whose lock file
    is missing is never removed by another run, so releasing early loses nothing."""
    for folder, (token, fd, pid) in list(_runs.items()):
        if pid == os.getpid():
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, RUN_LOCK.format(token=token)))
            with contextlib.suppress(OSError):
                os.close(fd)
            _runs.pop(folder, None)


def scratch_folder(kind: str, in_memory: bool = False) -> Path:
    """A fresh 0700 folder in the temporary folder (``in_memory``: in /dev/shm where the machine has it), named with
    this run's token (``attn-ref-<kind>-<token>-<n>``), so that a later run can tell the folders of a run that was
    killed outright (no cleanup ran)."""
    folder = (memory_folder() if in_memory else None) or tempfile.gettempdir()
    token = _run_token(folder)
    while True:
        path = Path(folder) / f"attn-ref-{kind}-{token}-{next(_made)}"
        try:
            path.mkdir(mode=0o700)  # never one that is there (a dead run's of the same token, not yet removed)
            return path
        except FileExistsError:
            continue


def _gone(folder: str, token: str) -> int | None:
    """The descriptor of the run's lock, taken, where the run that holds it is gone (its lock file is this user's
    and no process holds it); None where it lives, or its lock file is missing or not this user's."""
    try:
        fd = os.open(os.path.join(folder, RUN_LOCK.format(token=token)), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid():
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
    except OSError:  # BlockingIOError: the run lives
        pass
    os.close(fd)
    return None


def remove_leftovers() -> int:
    """Remove the scratch folders of runs that are gone (killed outright: `kill -9`, an OOM kill), and their lock
    files: each folder held a kernel's work folder, up to ``KernelCaps.disk_bytes``, and the submission's files.
    Only this user's; a living run's folders (its lock held, in any PID namespace) are left alone. Returns how
    many folders were removed."""
    return sum(_remove_leftovers_in(folder) for folder in dict.fromkeys([tempfile.gettempdir(), memory_folder()]) if folder)


def _remove_leftovers_in(folder: str) -> int:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    by_run: dict[str, list[os.DirEntry]] = {}
    for entry in entries:
        if found := SCRATCH.fullmatch(entry.name):
            by_run.setdefault(found.group(1), []).append(entry)
        elif entry.name.startswith("attn-ref-run-") and entry.name.endswith(".lock"):
            by_run.setdefault(entry.name[len("attn-ref-run-"):-len(".lock")], [])
    mine = _runs.get(folder, ("",))[0]
    removed = 0
    for token, folders in by_run.items():
        if token == mine or (lock := _gone(folder, token)) is None:
            continue
        try:
            for entry in folders:
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
                        remove_tree(entry.path)
                        removed += not os.path.lexists(entry.path)
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, RUN_LOCK.format(token=token)))
        finally:
            os.close(lock)
    return removed
