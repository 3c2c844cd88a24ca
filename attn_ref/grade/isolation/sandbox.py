"""Where, as whom and in what the student's kernel runs: resolved once per run, from run-time probes.

Two independent layers (docs/security.md):

* **A fresh uid per submission** where the grader is root (Gradescope, a TA as root): a number with no
  passwd entry, claimed with a lock and never reused while anything of it lives; umask 077; rlimits;
  ended with kill(-1) sent from that uid until nothing is left; its files in shared temporary folders and
  its SysV IPC removed afterwards.
* **Namespaces** where bubblewrap works (probed: Docker's seccomp, Ubuntu's AppArmor rule and macOS stop
  it): the kernel sees only its folders, the student environment and a private /tmp, in its own PID,
  network, IPC and mount namespaces.

In every mode the kernel talks to the grader over Unix sockets only (kernel.py). Where it has no network
namespace, a seccomp filter denies it every other kind of socket (launch_bounds.py): the loopback it
shares holds other programs' channels (a TA's own Jupyter kernels speak TCP).

A user without namespaces gets neither: the kernel runs as that user ("unsandboxed"), and only its
descendants are ended. The kernel always runs in a student environment where attn_ref is not importable.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..inkernel.errors import GraderError
from ..settings import SANDBOX_PROBE_TIMEOUT, KernelCaps
from ..student_python import BOUNDS, LAUNCHER
from . import cleanup, resources
from .safeio import make_kernel_dir, make_private_dir, remove_contents, write_new

STUDENT_ENV_ROOT = Path("/opt/attn-ref/student")  # setup.sh's place on Gradescope; `make` uses it as root

# The kernel's first code: no attn_ref, and a stand-in for otter while grading (inkernel/boot.py).
KERNEL_BOOT = (Path(__file__).parents[1] / "inkernel" / "boot.py").read_text()


class SandboxError(GraderError):
    """The kernel cannot be run as asked (no student environment, a sandbox that does not work)."""


@dataclass(frozen=True)
class SandboxPlan:
    """How every kernel of this run is confined; made by ``resolve``."""

    python: str  # the student environment's interpreter
    fresh_uids: bool  # root: each kernel gets its own uid
    bwrap: str | None  # bubblewrap, where the probe showed namespaces work
    mounts: tuple[str, ...] = ()  # folders the interpreter needs, bound read-only into the namespaces
    tmp_size: bool = True  # bubblewrap can size the private /tmp
    cgroups: tuple[str, ...] = ()  # controllers a per-kernel cgroup is made with (probed; none: memory is polled)
    network_ban: bool = False  # the seccomp filter works here (probed): kernels without namespaces get it
    caps: KernelCaps = field(default_factory=KernelCaps)  # a kernel's memory, processes, files, disk, CPU
    warnings: tuple[str, ...] = ()

    @property
    def mode(self) -> str:
        layers = [name for name, on in (("fresh uid", self.fresh_uids), ("namespaces", self.bwrap)) if on]
        return " + ".join(layers) or "unsandboxed"

    @property
    def denies_network(self) -> bool:
        """Whether each kernel's launcher installs the network ban: it has no network namespace, and the ban works."""
        return self.bwrap is None and self.network_ban

    @property
    def kernel_network(self) -> str:
        if self.bwrap:
            return "none (a network namespace of its own)"
        return "Unix sockets only (seccomp)" if self.denies_network else "this machine's, loopback included"

    @property
    def unsandboxed(self) -> bool:
        return not self.fresh_uids and self.bwrap is None

    def for_gpu(self) -> SandboxPlan:
        """CUDA reserves far more address space than it uses, and needs the GPU's device files."""
        if not self.bwrap:
            return replace(self, caps=replace(self.caps, memory_bytes=None))
        lost = "no namespaces (the kernel needs the GPU's devices)"
        return replace(self, caps=replace(self.caps, memory_bytes=None), bwrap=None,
                       warnings=self.warnings + (f"GPU runner: {lost}" + ("" if self.network_ban else
                                                 f"; {_NETWORK_OPEN}"),))

    def describe(self) -> dict:
        return {"mode": self.mode, "python": self.python, "unsandboxed": self.unsandboxed,
                "kernel_bounds": f"cgroups ({', '.join(self.cgroups)})" if self.cgroups else "polled",
                "kernel_network": self.kernel_network}


_NETWORK_OPEN = ("the kernel can reach this machine's network, loopback included (the seccomp filter does not "
                 "work here: install libseccomp)")


# ---- resolving the plan ------------------------------------------------------------------------------

def default_student_python() -> Path | None:
    """The student environment `make release` creates: /opt/attn-ref/student as root, else .venv-student."""
    candidates = []
    if os.environ.get("ATTN_REF_STUDENT_ENV"):
        candidates.append(Path(os.environ["ATTN_REF_STUDENT_ENV"]))
    repo = Path(__file__).resolve().parents[3]
    if os.geteuid() == 0:
        candidates.append(STUDENT_ENV_ROOT)
    candidates.append(repo / ".venv-student")
    for env in candidates:
        if (env / "bin" / "python").exists():
            return env / "bin" / "python"
    return None


PYTHON_PROBE = (
    "import importlib.util as u, json, sys; "
    "print(json.dumps([sys.prefix, sys.base_prefix, u.find_spec('attn_ref') is None, u.find_spec('ipykernel') is not None]))"
)


def _probe_python(python: str, uid: int | None) -> tuple[str, str]:
    """(prefix, base prefix) of the kernel's interpreter, run as the kernel would be; SandboxError if unusable."""
    user = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
    try:
        done = subprocess.run([python, "-I", "-c", PYTHON_PROBE], capture_output=True, text=True, timeout=SANDBOX_PROBE_TIMEOUT,
                              env={"PATH": "/usr/bin:/bin", "HOME": "/"}, cwd="/", **user)
        prefix, base, clean, has_kernel = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        who = f"uid {uid}" if uid is not None else "this user"
        raise SandboxError(f"the student environment's interpreter {python} does not run as {who}"
                           + (": it and every folder above it must be readable by other users (make release puts "
                              f"it in {STUDENT_ENV_ROOT} as root)" if uid is not None else "")) from None
    if not clean:
        raise SandboxError(f"{python} can import attn_ref, the grader's reference: grade with a student environment "
                           "(make release creates one; see docs/security.md), not the grader's own")
    if not has_kernel:
        raise SandboxError(f"{python} has no ipykernel: it is not a student environment (make release creates one)")
    return prefix, base


def _bwrap_works(bwrap: str, uid: int | None) -> bool:
    user = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
    try:
        done = subprocess.run([bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
                               "--dev", "/dev", "true"], capture_output=True, timeout=SANDBOX_PROBE_TIMEOUT, cwd="/", **user)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _network_ban_works() -> bool:
    try:
        return subprocess.run([sys.executable, "-I", str(BOUNDS)], capture_output=True, cwd="/",
                              timeout=SANDBOX_PROBE_TIMEOUT).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _bwrap_sizes_tmpfs(bwrap: str) -> bool:
    try:
        return "--size" in subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=SANDBOX_PROBE_TIMEOUT).stdout
    except (OSError, subprocess.SubprocessError):
        return False


_PLANS: dict[tuple, SandboxPlan] = {}


def _kernel_python(autograder: str | Path | None, python: str | None) -> str:
    """The kernel's interpreter: the argument, ATTN_REF_KERNEL_PYTHON, the autograder's sandbox.json, or the
    student environment of `make release`."""
    settings = {}
    if autograder is not None and Path(autograder, "sandbox.json").is_file():
        settings = json.loads(Path(autograder, "sandbox.json").read_text())
    python = python or os.environ.get("ATTN_REF_KERNEL_PYTHON") or settings.get("kernel_python")
    if python:
        return python
    found = default_student_python()
    if found is None:
        raise SandboxError("no student environment to run submissions in: run `make release` (it creates one), "
                           "or pass --kernel-python PATH")
    return str(found)


def _probed(python: str, namespaces: str, root: bool) -> tuple[str, str, str | None]:
    """The interpreter's prefixes and a bubblewrap that works here (None where it does not or is turned off),
    probed as a fresh uid where the grader is root; what the probes leave behind is ended."""
    cleanup.become_subreaper()  # what the probes leave behind comes back here and is reaped
    before = cleanup.child_pids()
    probe_uid = cleanup.claim_uid() if root else None
    try:
        prefix, base = _probe_python(python, probe_uid.uid if probe_uid else None)
        bwrap = shutil.which("bwrap") if namespaces != "off" else None
        if bwrap and not _bwrap_works(bwrap, probe_uid.uid if probe_uid else None):
            bwrap = None
    finally:
        if probe_uid is not None:
            cleanup.end_processes(probe_uid.uid, set(), before)
            probe_uid.release()
        else:
            cleanup.reap_zombies(before)
    return prefix, base, bwrap


def _warnings(namespaces: str, bwrap: str | None, root: bool, network_ban: bool) -> list[str]:
    """What the plan does not stop, said to the TA and written into every result."""
    warnings = []
    if bwrap is None:
        why = "turned off" if namespaces == "off" else "bubblewrap missing or blocked here"
        warnings.append(f"no namespaces ({why}): the kernel sees this machine's files "
                        + ("as a fresh uid of its own" if root else "and acts AS YOUR USER: unsandboxed"))
    if bwrap is None and not network_ban:
        warnings.append(_NETWORK_OPEN)
    return warnings


def resolve(autograder: str | Path | None = None, python: str | None = None, namespaces: str = "auto") -> SandboxPlan:
    """The plan for this run: the kernel's interpreter (argument, ATTN_REF_KERNEL_PYTHON, the autograder's
    sandbox.json, the student environment of `make release`), fresh uids as root, and namespaces where
    the probe shows bubblewrap works (``namespaces``: "auto", "require" or "off"; ATTN_REF_NAMESPACES)."""
    namespaces = os.environ.get("ATTN_REF_NAMESPACES", namespaces)
    if namespaces not in ("auto", "require", "off"):
        raise SandboxError(f"namespaces must be auto, require or off, not {namespaces!r}")
    python = _kernel_python(autograder, python)
    key = (python, namespaces, os.geteuid())
    if key in _PLANS:
        return _PLANS[key]
    root = os.geteuid() == 0
    prefix, base, bwrap = _probed(python, namespaces, root)
    if namespaces == "require" and bwrap is None:
        raise SandboxError("namespaces were required but bubblewrap does not work here (not installed, or user "
                           "namespaces are blocked: Docker's seccomp profile, Ubuntu's AppArmor rule, macOS)")
    network_ban = _network_ban_works()  # also where namespaces work: a GPU runner goes without them (for_gpu)
    mounts = tuple(sorted({str(Path(p).resolve()) for p in (prefix, base)}))
    plan = SandboxPlan(python=python, fresh_uids=root, bwrap=bwrap, mounts=mounts,
                       tmp_size=bool(bwrap) and _bwrap_sizes_tmpfs(bwrap),
                       warnings=tuple(_warnings(namespaces, bwrap, root, network_ban)),
                       cgroups=resources.probe(KernelCaps().processes), network_ban=network_ban)
    _PLANS[key] = plan
    return plan


# ---- one submission's confinement --------------------------------------------------------------------

def kernel_threads() -> str:
    """The kernels' OpenMP threads (1 unless the grader's environment says): torch's pool of 2+ threads spins
    on every small op, several milliseconds of CPU each on a loaded machine, for tensors too small to split."""
    return os.environ.get("OMP_NUM_THREADS", "1")


def trusted_runner_env() -> dict[str, str]:
    """The environment of a trusted helper process (the mutants' and the sweep's runners): the grader's own,
    with the kernels' thread count, so their calls compute as the kernels' do."""
    return dict(os.environ, OMP_NUM_THREADS=kernel_threads())


def kernel_env(plan: SandboxPlan, workdir: Path, tmpdir: Path) -> dict[str, str]:
    """A minimal environment: nothing of the grader's (no PYTHONPATH, no tokens)."""
    bin_dir = str(Path(plan.python).parent)
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "USER": "student",
        "LOGNAME": "student",
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmpdir),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(workdir / ".matplotlib"),
        "IPYTHONDIR": str(workdir / ".ipython"),
        "JUPYTER_RUNTIME_DIR": str(workdir / ".jupyter"),
        "OMP_NUM_THREADS": kernel_threads(),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _system_binds() -> list[str]:
    args = []
    for top in ("/usr", "/etc"):
        args += ["--ro-bind", top, top]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


STOPPED_FILE = "stopped.txt"  # in a jail's base, the grader's alone: why a guard ended the kernel, a line each


class Jail:
    """One submission's confinement: its uid (fresh as root), its folders under ``base``, and its end.

    Every folder the kernel may write is made here, fresh, inside ``base``, which only the grader writes.
    Made by the supervisor before it forks the grading process; both use it.
    """

    def __init__(self, plan: SandboxPlan, base: Path, image: Path | None = None):
        self.plan, self.base = plan, base
        self.image = image  # the batch's kernel image's socket (image.py), if kernels start from one
        self._claim = cleanup.claim_uid() if plan.fresh_uids else None
        self.uid = self._claim.uid if self._claim else os.getuid()
        self.gid = self.uid if self._claim else os.getgid()
        self.ended = False
        # what the grading process ends once it has sent its results, last first (its kernel, its helpers)
        self.later = contextlib.ExitStack()
        self.cgroups = self._make_cgroups()
        self.exchange = self._exchange_folder()

    @property
    def folders(self) -> tuple[Path, ...]:
        """Every folder the kernel's files can be in: what the disk guard measures and the end removes."""
        return (self.base,) if self.exchange.parent == self.base else (self.base, self.exchange)

    def _exchange_folder(self) -> Path:
        """Where the calls' folders go (a call's inputs and the kernel's reply: a dozen small files a call). In memory
        (/dev/shm) where the kernel's memory cgroup bounds it: every page the kernel writes there is charged to that
        cgroup, and the disk guard counts it too; on a disk, making a file costs about 0.6 ms, a tenth of a call.
        Elsewhere (memory polled, which a file in memory escapes) in ``base``, on the disk."""
        if self.cgroups is not None and self.cgroups.bounds_memory:
            folder = cleanup.scratch_folder("exchange", in_memory=True)
            folder.chmod(0o711)  # the kernel's user may pass through, not list
            return folder
        return make_private_dir(self.base, "exchange")

    def _make_cgroups(self) -> resources.KernelCgroups | None:
        limits = self.plan.caps
        controllers = tuple(c for c in self.plan.cgroups if c != "memory" or limits.kernel_memory_bytes)
        if not controllers:
            return None
        try:  # named like the base (unique); None: the supervisor polls this kernel's memory instead
            return resources.KernelCgroups(controllers, self.base.name, limits.kernel_memory_bytes or 0, limits.processes)
        except (OSError, KeyError):
            return None

    def stopped(self) -> list[str]:
        """Why the supervisor's guards ended this jail's kernel so far, a line each (read by the grading process)."""
        try:
            return (self.base / STOPPED_FILE).read_text().splitlines()
        except OSError:
            return []

    def note_stopped(self, note: str) -> None:
        """Leave why a guard ends the kernel, before it does (by the supervisor)."""
        notes = self.stopped()
        if note not in notes:
            with contextlib.suppress(OSError):
                (self.base / STOPPED_FILE).write_text("\n".join([*notes, note]))

    def clear_calls(self) -> None:
        """Remove every call's folders so far (between kernels: none is read after its call)."""
        remove_contents(self.exchange)

    @property
    def own_uid(self) -> bool:
        """Whether the kernel runs as a uid of its own (the grader is root)."""
        return self._claim is not None

    @property
    def owner(self) -> int:
        """The uid every file the kernel writes belongs to."""
        return self.uid

    def kernel_dir(self, parent: Path, name: str, files: dict[str, bytes] | None = None) -> Path:
        """A fresh folder for the kernel, with ``files`` written by the grader before it is handed over."""
        path = make_kernel_dir(parent, name, None, None)
        for file_name, data in (files or {}).items():
            write_new(path / file_name, data, 0o600)
            if self.own_uid:
                os.chown(path / file_name, self.uid, self.gid, follow_symlinks=False)
        if self.own_uid:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            try:
                os.fchown(fd, self.uid, self.gid)
            finally:
                os.close(fd)
        return path

    def launch_config(self, workdir: Path, tmpdir: Path, conn_dir: Path, sock_dir: Path) -> dict:
        """What launch.py needs to start one kernel: who, with which limits, in what."""
        limits = self.plan.caps
        nproc = limits.processes
        if not self.own_uid:  # RLIMIT_NPROC counts every thread of the user's processes, the grader's and other kernels'
            nproc += cleanup.count_tasks(self.uid) + USER_TASKS_BESIDE
        rlimits = {"RLIMIT_NPROC": nproc, "RLIMIT_FSIZE": limits.file_size_bytes, "RLIMIT_CPU": limits.cpu_seconds,
                   "RLIMIT_CORE": 0, "RLIMIT_MSGQUEUE": 0}  # no POSIX message queue: nothing cleans them up
        if limits.memory_bytes:
            rlimits["RLIMIT_AS"] = limits.memory_bytes
        return {
            "uid": self.uid if self.own_uid else None,
            "gid": self.gid if self.own_uid else None,
            "connection_copy": str(conn_dir / "kernel.json"),
            "limits": rlimits,
            "env": kernel_env(self.plan, workdir, Path("/tmp") if self.plan.bwrap else tmpdir),
            "workdir": str(workdir),
            "nice": limits.nice,
            "cgroups": self.cgroups.procs_files if self.cgroups else [],
            "wrapper": self._bwrap_argv(workdir, conn_dir, sock_dir) if self.plan.bwrap else None,
            "image": str(self.image) if self.image else None,
            "deny_network": self.plan.denies_network,
        }

    def _bwrap_argv(self, workdir: Path, conn_dir: Path, sock_dir: Path) -> list[str]:
        plan = self.plan
        sized = ["--size", str(plan.caps.tmp_bytes)] if plan.tmp_size else []
        argv = [plan.bwrap, "--die-with-parent", "--unshare-all", "--unshare-user", "--disable-userns", *sized, "--tmpfs", "/tmp",
                *_system_binds()]
        for mount in plan.mounts:
            if not mount.startswith(("/usr/", "/etc/")):
                argv += ["--ro-bind", mount, mount]
        # the fresh /dev and /dev/shm before the grader's folders: a grader whose TMPDIR is in /dev/shm (in memory,
        # where a call's files cost a tenth of a disk's) binds its folders there, which a later mount would hide
        argv += ["--proc", "/proc", "--dev", "/dev", *sized, "--tmpfs", "/dev/shm"]
        argv += ["--bind", str(workdir), str(workdir), "--ro-bind", str(conn_dir), str(conn_dir),
                 "--bind", str(self.exchange), str(self.exchange), "--bind", str(sock_dir), str(sock_dir)]
        return [*argv, "--chdir", str(workdir), "--"]

    def kill_processes(self) -> int:
        """End everything the kernel started; from the grading process (as root: every process of the uid,
        which cannot be outrun; otherwise this process's descendants)."""
        return cleanup.end_processes(self.uid if self.own_uid else None, set())

    def end(self, spare: set[int]) -> None:
        """From the supervisor, once the grading process is gone: as root, kill whatever of the uid is left,
        remove its files in shared folders and its SysV IPC, and release the uid. ``spare``: the
        supervisor's other children (grading processes it waits for itself)."""
        if self.ended:
            return
        self.ended = True
        if self.own_uid:
            cleanup.end_processes(self.uid, set(), spare)
            cleanup.remove_uid_leftovers(self.uid)
        if self.cgroups is not None and not self.cgroups.remove():
            print(f"attn-ref: a kernel's cgroup could not be removed ({', '.join(self.cgroups.procs_files)})", file=sys.stderr)
        if self.own_uid:
            self._claim.release()  # last: nothing of the uid is left, not even in a cgroup


# As a user (no uid of its own), a kernel's RLIMIT_NPROC is the user's tasks when it starts, plus its own 64, plus
# this much room for what the user's other processes start meanwhile: the limit is checked against every thread of
# the user's, so a kernel starting beside it (ipykernel's and zmq's threads, another batch of the same TA) could use a
# kernel's 64 up before it made its own threads, and the kernel exited at its start (two batches of 3 side by side:
# 4 of 12 runs had "not graded" rows, against none of 6 with this room, nor of 6 with 2,000).
USER_TASKS_BESIDE = 256


def write_launcher_files(folder: Path, config: dict, python_argv: list[str]) -> Path:
    """The launcher's config and a kernelspec naming it; returns the kernels folder for jupyter_client."""
    config_path = folder / "launch.json"
    write_new(config_path, json.dumps(config).encode(), 0o600)
    spec_dir = folder / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    argv = [sys.executable, "-I", str(LAUNCHER), str(config_path), "--", *python_argv, "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "Python 3 (graded)", "language": "python", "interrupt_mode": "signal"}
    write_new(spec_dir / "kernel.json", json.dumps(spec).encode(), 0o600)
    return folder / "kernels"


def kernel_argv(plan: SandboxPlan) -> list[str]:
    return [plan.python, "-c", KERNEL_BOOT]

