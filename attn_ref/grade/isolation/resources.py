"""Each kernel's share of the machine over ALL its processes: a memory total and a CPU share.

The per-process rlimits (settings.KernelCaps) do not bound a kernel that forks: 64 processes under 4 GB of
address space each can together exhaust the machine, and the OOM killer may then pick an honest kernel or
the grader. So, per kernel, probed at run time:

* **cgroups** where the grader can make one (root on a writable cgroupfs, v1 or v2; on Linux a controller
  lives in one hierarchy only): a memory limit (the kernel's own processes are OOM-killed at it and the
  supervisor, seeing the kill, ends the kernel), a CPU weight (a kernel of 64 busy processes gets the share
  of one, below a grader process) and a process count. launch.py moves the kernel in, as root, before it
  drops privileges; everything it starts is born inside.
* **polling** where not (Gradescope's Docker mounts cgroupfs read-only; a TA has no delegation): the
  supervisor sums the memory of the kernel's processes each guard interval and ends the kernel past the
  bound, as it does for the disk.

Always: kernels run niced below the grader, and with oom_score_adj 1000 (launch.py), inherited by every
process of the kernel; set by root it cannot be lowered by the kernel (the kernel records it as the
minimum), and where it could (a TA's own user) the poll raises it back.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

# controller: (its limit file in cgroup v1, in cgroup v2)
LIMIT_FILES = {"memory": ("memory.limit_in_bytes", "memory.max"), "cpu": ("cpu.shares", "cpu.weight"),
               "pids": ("pids.max", "pids.max")}
CPU_WEIGHT = (512, 50)  # half a nice-0 process (v1 shares 1024, v2 weight 100): the grader comes first
OOM_FIRST = 1000  # oom_score_adj of every kernel process


# ---- where this process's cgroups are ------------------------------------------------------------------

@dataclass(frozen=True)
class Hierarchy:
    folder: Path  # this process's own cgroup in it: kernels' groups are made inside (its limits hold for them)
    v2: bool


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(root inside the hierarchy, mount point, fs type, super options) of each cgroup mount."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if sep and len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], Path(fields[4]), tail[0], set(tail[2].split(","))))
    return found


def own_hierarchies() -> dict[str, Hierarchy]:
    """controller -> the hierarchy holding it and this process's cgroup there (v1 first: a controller bound
    to a v1 hierarchy is not available in v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    member = {}  # v1 controller -> path; "" -> the v2 path
    for line in lines:
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            member[name] = path
    found: dict[str, Hierarchy] = {}
    for v2 in (False, True):
        for root, point, fstype, options in _mounts():
            ours = [c for c in LIMIT_FILES if c in options]
            if (fstype == "cgroup2") != v2 or not (v2 or ours):
                continue
            path, root = member.get("" if v2 else ours[0]), root.rstrip("/")
            if path is None or not (path + "/").startswith(root + "/"):
                continue  # this process's cgroup is not visible under that mount
            folder = point / path[len(root):].lstrip("/")
            for name in _v2_controllers(folder) if v2 else ours:
                found.setdefault(name, Hierarchy(folder, v2))
    return found


def _v2_controllers(folder: Path) -> list[str]:
    try:  # what this cgroup hands to its children
        return [c for c in (folder / "cgroup.subtree_control").read_text().split() if c in LIMIT_FILES]
    except OSError:
        return []


# ---- one kernel's cgroups ------------------------------------------------------------------------------

def _limit_value(controller: str, v2: bool, memory_bytes: int, processes: int) -> str:
    if controller == "memory":
        return str(memory_bytes)
    if controller == "cpu":
        return str(CPU_WEIGHT[v2])
    return str(processes)


class KernelCgroups:
    """One kernel's cgroup per controller, made inside the grader's own; removed once the kernel is gone.
    ``name``: unique on this machine (the jail's base folder's)."""

    def __init__(self, controllers: tuple[str, ...], name: str, memory_bytes: int, processes: int):
        self.folders: dict[str, Path] = {}
        hierarchies = own_hierarchies()
        try:
            for controller in controllers:
                where = hierarchies[controller]
                folder = where.folder / name
                if folder not in self.folders.values():  # v2: one folder holds every controller
                    folder.mkdir(mode=0o755)
                self.folders[controller] = folder
                (folder / LIMIT_FILES[controller][where.v2]).write_text(
                    _limit_value(controller, where.v2, memory_bytes, processes))
        except (OSError, KeyError):
            self.remove()
            raise

    @property
    def procs_files(self) -> list[str]:
        """What launch.py writes its pid into (as root, before it drops privileges)."""
        return sorted({str(folder / "cgroup.procs") for folder in self.folders.values()})

    @property
    def bounds_memory(self) -> bool:
        return "memory" in self.folders

    def pids(self) -> set[int]:
        """Every process of the kernel: each joined its cgroup before it dropped privileges, and none can leave
        it (a cgroup's files are root's). One read instead of a walk of every process on the machine."""
        found: set[int] = set()
        for procs in self.procs_files:
            try:
                found.update(int(line) for line in Path(procs).read_text().split())
            except (OSError, ValueError):
                pass
        return found

    def oom_kills(self) -> int:
        """How many of the kernel's processes the OOM killer ended at the memory limit (v1: memory.oom_control,
        v2: memory.events)."""
        folder = self.folders.get("memory")
        for name in ("memory.events", "memory.oom_control"):
            try:
                lines = (folder / name).read_text().splitlines() if folder else []
            except OSError:
                continue
            for line in lines:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self, timeout: float = 5.0) -> bool:
        """Remove the groups, ending whatever is still inside (the kernel's processes only: nothing else is
        ever moved in). False if one could not be removed."""
        deadline = time.monotonic() + timeout
        for folder in sorted(set(self.folders.values()), reverse=True):
            while folder.exists():
                try:
                    folder.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        return False
                    _kill_members(folder)
                    time.sleep(0.02)
        return True


def _kill_members(folder: Path) -> None:
    try:
        pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def probe(processes: int) -> tuple[str, ...]:
    """The controllers a kernel's cgroup can be made with here: each tried for real (made, limited, writable
    to join, removed)."""
    usable = []
    for controller in sorted(own_hierarchies()):
        try:
            group = KernelCgroups((controller,), f"attn-ref-probe-{os.getpid()}", 1 << 30, processes)
        except OSError:
            continue
        try:
            if all(os.access(p, os.W_OK) for p in group.procs_files):
                usable.append(controller)
        finally:
            group.remove()
    return tuple(usable)


# ---- polling -------------------------------------------------------------------------------------------

def used_memory(processes: list[psutil.Process], bound: int) -> int:
    """The kernel's memory: the summed PSS of its processes, which splits each shared page among the
    processes sharing it (summed RSS would count the forks of one torch kernel once each: 64 forks, 20 GB).
    RSS, cheap and never below PSS, is summed first; PSS is read only when that is over ``bound``; a
    process whose PSS cannot be read (it made itself undumpable) counts with its RSS."""
    rss = {}
    for p in processes:
        try:
            rss[p] = p.memory_info().rss
        except psutil.Error:
            pass
    if sum(rss.values()) <= bound:
        return sum(rss.values())
    total = 0
    for p, resident in rss.items():
        try:
            total += p.memory_full_info().pss
        except psutil.AccessDenied:
            total += resident
        except psutil.Error:
            pass
    return total


def keep_oom_first(processes: list[psutil.Process]) -> None:
    """Raise a kernel process that lowered its oom_score_adj back (possible only where the grader is not
    root), so the OOM killer still picks a kernel before the grader."""
    for p in processes:
        path = f"/proc/{p.pid}/oom_score_adj"
        try:
            with open(path) as f:
                if int(f.read()) >= OOM_FIRST:
                    continue
            with open(path, "w") as f:
                f.write(str(OOM_FIRST))
        except (OSError, ValueError):
            pass
