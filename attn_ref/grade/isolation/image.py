"""The kernel image of a batch (image_server.py), from the trusted side: whether one may be used, starting it,
ending it.

A batch on several submissions pays the kernel's start-up (torch's import, and the part of torch that meta
tensors load) once instead of once per submission: the supervisor starts one image, and each kernel start
asks it for a copy (launch_image.py). It is used only where a kernel cannot reach the image: as root (each
kernel a fresh uid, the image root's) or inside bubblewrap's namespaces (the image is outside them). A TA
without namespaces (the kernel would be the image's own user), a GPU runner (CUDA is not forked) and a
cluster worker (one grader process per submission) start every kernel afresh, as does any run where the
image does not start.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from ..inkernel.errors import GraderError
from ..settings import IMAGE_READY_TIMEOUT
from ..student_python import BOUNDS, IMAGE_SERVER
from ..student_python.launch_image import Unavailable, ask
from . import cleanup
from .safeio import make_private_dir
from .sandbox import SandboxPlan, kernel_env

SERVER = IMAGE_SERVER.read_text()
# BOUNDS (student_python/launch_bounds.py) is loaded by the image: each child sets launch.py's bounds


class ImageError(GraderError):
    """The image could not be started: kernels start afresh (the reason says why)."""


def why_not(plan: SandboxPlan) -> str:
    """Why this run's kernels cannot start from an image, or ''."""
    if plan.unsandboxed:
        return "no sandbox: a kernel as your own user could reach the image"
    if plan.caps.memory_bytes is None:
        return "a GPU runner: CUDA is not shared between processes"
    if not hasattr(os, "pidfd_open"):
        return "this system has no pidfd (Linux 5.3 or newer)"
    return ""


class KernelImage:
    """One image process for a batch; ``socket`` is what the jails hand their launchers.

    ``wait``: until it is ready (else ImageError). Without it, kernels may be asked for at once: their requests
    wait in the socket's queue while the image imports, and ``settled()`` tells, without blocking, when it is
    ready or why it never will be (then it is ended, and the requests waiting fail, so their kernels start afresh)."""

    def __init__(self, plan: SandboxPlan, wait: bool = True):
        why = why_not(plan)
        if why:
            raise ImageError(why)
        self.folder = cleanup.scratch_folder("image")  # 0700: no kernel reaches the socket
        self.socket = self.folder / "image.sock"
        home = make_private_dir(self.folder, "home")
        env = kernel_env(plan, home, home)
        self.log = open(self.folder / "image.log", "wb")  # noqa: SIM115 - closed in close()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            try:
                listener.bind(str(self.socket))
                listener.listen(64)
                # the supervisor's pid: the image tells it apart from an adoptive parent (the supervisor may be PID 1)
                self.process = subprocess.Popen([plan.python, "-c", SERVER, str(listener.fileno()), str(os.getpid()),
                                                 str(BOUNDS)],
                                                cwd=home, env=env,
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                                pass_fds=[listener.fileno()], start_new_session=True)
            except OSError as err:
                self.close()
                raise ImageError(f"it did not start ({err})") from None
        self.pid = self.process.pid
        self.deadline, self._said, self.ready = time.monotonic() + IMAGE_READY_TIMEOUT, b"", False
        if wait:
            try:
                while not self.settled(timeout=max(self.deadline - time.monotonic(), 0)):
                    pass
            except ImageError:
                self.close()
                raise

    def settled(self, timeout: float = 0.0) -> bool:
        """Whether it is ready (True), after waiting at most ``timeout`` seconds for its line; False while it still
        imports; ImageError (the image ended, so that no request waits on it) where it never will be ready."""
        if self.ready:
            return True
        try:
            status = self._status(timeout)
        except ImageError:
            self._end()
            raise
        if status is None:
            return False
        if not status.get("ready"):
            self._end()
            raise ImageError(str(status.get("why") or "it refused")[:300])
        self.ready = True
        return True

    def _status(self, timeout: float) -> dict | None:
        """Its one line of status once it has come, else None (ImageError: it never will)."""
        out = self.process.stdout.fileno()
        while not self._said.endswith(b"\n"):
            if not select.select([out], [], [], timeout)[0]:
                if time.monotonic() > self.deadline:
                    raise ImageError("it was not ready in time")
                return None
            chunk = os.read(out, 4096)
            if not chunk:
                self.log.flush()
                tail = (self.folder / "image.log").read_bytes()[-300:].decode(errors="replace").strip()
                raise ImageError(f"it exited while importing ({tail or 'no message'})")
            self._said += chunk
            if len(self._said) > 1 << 16:
                raise ImageError("it said something unexpected")
        try:
            status = json.loads(self._said)
        except ValueError:
            raise ImageError("it said something unexpected") from None
        return status if isinstance(status, dict) else {}

    def _end(self) -> None:
        """Ended where it will never be ready: the kernels' requests queued on its socket fail, and start afresh."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        """End the image (kernels already started from it live on until their gradings end them)."""
        process = getattr(self, "process", None)
        if process is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()
            self.process = None
        if not self.log.closed:
            self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class HelperProcess:
    """A trusted helper of a grading forked from the image instead of started afresh (the mutants' runner, which
    imports torch): its standard streams are this side's pipes. The few methods of subprocess.Popen that
    mutant_match.py uses."""

    def __init__(self, image: Path, source: str, cwd: Path, argv0: str):
        to_helper, self_in = os.pipe()
        self_out, from_helper = os.pipe()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            pid = ask(str(image), {"kind": "runner", "source": source, "cwd": str(cwd), "argv0": argv0},
                      [to_helper, from_helper, null])
            self.pidfd = os.pidfd_open(pid)
        except (Unavailable, OSError) as err:
            os.close(self_in)
            os.close(self_out)
            raise ImageError(str(err)) from None
        finally:
            for fd in (to_helper, from_helper, null):
                os.close(fd)
        self.stdin = os.fdopen(self_in, "w")
        self.stdout = os.fdopen(self_out, "r")

    def kill(self) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait(self) -> None:
        """Until it has ended (the image reaps it); then its streams are closed."""
        select.select([self.pidfd], [], [])
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except OSError:
                pass
        os.close(self.pidfd)
