"""Where and as whom the student's kernel runs, with which limits; and ending what it leaves behind.

On Gradescope (root), setup.sh makes an unprivileged user and a student environment without attn_ref or
the checks, and writes them to sandbox.json beside checks.json. On a TA's machine (not root) the kernel
runs as the TA's own user: that protects the scores (no student code in the grader, nothing unpickled),
not the TA's files.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import psutil

LAUNCHER = Path(__file__).with_name("launch.py")
PR_SET_CHILD_SUBREAPER = 36

# Runs in the kernel's interpreter before ipykernel: attn_ref (the grader's reference) is not importable.
KERNEL_BOOT = """
import sys
class _NoGraderImports:
    def find_spec(self, name, path=None, target=None):
        if name == "attn_ref" or name.startswith("attn_ref."):
            raise ImportError("attn_ref is the grader's reference; submissions cannot import it")
        return None
sys.meta_path.insert(0, _NoGraderImports())
del _NoGraderImports
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


@dataclass
class Sandbox:
    python: str = sys.executable  # the interpreter of the student's environment
    user: str | None = None  # run the kernel as this user (only when the grader is root)
    memory_bytes: int | None = 4 << 30  # address space (torch maps ~1.5 GB at import); None: no cap (CUDA)
    max_processes: int = 64  # for a dedicated user; a shared user gets its current count on top
    file_size_bytes: int = 256 << 20
    cpu_seconds: int = 900
    exclusive: bool = True  # one submission at a time: every process of a dedicated user may be ended
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def configured(cls, autograder: str | Path | None = None, python: str | None = None, user: str | None = None) -> "Sandbox":
        """From arguments, then ATTN_REF_KERNEL_PYTHON / ATTN_REF_KERNEL_USER, then sandbox.json."""
        settings = {}
        if autograder is not None and Path(autograder, "sandbox.json").is_file():
            settings = json.loads(Path(autograder, "sandbox.json").read_text())
        python = python or os.environ.get("ATTN_REF_KERNEL_PYTHON") or settings.get("kernel_python") or sys.executable
        user = user or os.environ.get("ATTN_REF_KERNEL_USER") or settings.get("kernel_user")
        box = cls(python=python, user=user)
        if box.user and os.geteuid() != 0:
            box.warnings.append(f"not root: the kernel runs as this user, not as {box.user!r}")
            box.user = None
        if box.user is None and os.geteuid() == 0:
            box.warnings.append("the kernel ran as root: set a kernel user (see README) to keep it from the grader's files")
        return box

    @property
    def account(self):
        return pwd.getpwnam(self.user) if self.user else None

    def limits(self) -> dict[str, int]:
        processes = self.max_processes
        if self.account is None:  # RLIMIT_NPROC counts every process of the user
            processes += sum(1 for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == os.getuid())
        limits = {"RLIMIT_NPROC": processes, "RLIMIT_FSIZE": self.file_size_bytes, "RLIMIT_CPU": self.cpu_seconds}
        if self.memory_bytes:
            limits["RLIMIT_AS"] = self.memory_bytes
        return limits

    def kernel_env(self, workdir: Path) -> dict[str, str]:
        """A minimal environment: nothing of the grader's (no PYTHONPATH, no tokens)."""
        bin_dir = str(Path(self.python).parent)
        return {
            "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(workdir),
            "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg",
            "IPYTHONDIR": str(workdir / ".ipython"),
            "JUPYTER_RUNTIME_DIR": str(workdir / ".jupyter"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def prepare(self, folder: Path, workdir: Path) -> tuple[Path, dict]:
        """Write the kernelspec and the launcher's config under ``folder``; returns (kernels dir, env)."""
        account = self.account
        config = {"workdir": str(workdir), "env": self.kernel_env(workdir), "limits": self.limits()}
        if account is not None:
            connection_dir = folder / "connection"
            connection_dir.mkdir()
            for path in (workdir, connection_dir):
                os.chown(path, account.pw_uid, account.pw_gid)
                os.chmod(path, 0o700)
            config.update(uid=account.pw_uid, gid=account.pw_gid, connection_dir=str(connection_dir))
        config_path = folder / "launch.json"
        config_path.write_text(json.dumps(config))
        spec_dir = folder / "kernels" / "python3"
        spec_dir.mkdir(parents=True)
        argv = [sys.executable, str(LAUNCHER), str(config_path), "--", self.python, "-c", KERNEL_BOOT, "-f", "{connection_file}"]
        (spec_dir / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3 (graded)", "language": "python"}))
        return folder / "kernels", config["env"]

    def grant(self, path: Path) -> None:
        """Let the kernel write into a folder the grader made (its user owns it)."""
        account = self.account
        if account is not None:
            os.chown(path, account.pw_uid, account.pw_gid)


def become_subreaper() -> None:
    """Orphans of the kernel (double fork, setsid) re-parent to this process, so they can be ended."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: process groups are all we have
        warnings.warn("cannot become a child subreaper; orphaned processes may outlive grading", stacklevel=2)


def end_processes(before: set[int], user: str | None) -> int:
    """Kill every descendant started since ``before`` (and, for a dedicated user, all its processes)."""
    victims = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    if user:
        uid = pwd.getpwnam(user).pw_uid
        victims += [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == uid]
    for p in victims:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(victims, timeout=5)
    return len(victims)
