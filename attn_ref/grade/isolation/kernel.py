"""The student's notebook in its own Jupyter kernel (jupyter_client), driven from the grader's process.

The grader sends code and reads the kernel's shell replies as untrusted data: bounded in size (a larger
message drops the connection), in number (only the shell channel is connected: nothing floods IOPub
into the grader) and in time (every wait checks its deadline). Each start of the kernel gets fresh
folders from the jail; a kernel that hangs past an interrupt is restarted.

The kernel's channels are Unix sockets in every mode, never TCP: TCP on a shared loopback lets any
process subscribe to another kernel's IOPub (signing stops forgery, not reading). The sockets live in a
folder of the kernel's start that the grader made; each must belong to the kernel's uid with no group or
other bits, and once they exist the grader takes the folder back (root's, 0700), so no other uid can even
reach them by path.
"""

from __future__ import annotations

import os
import queue
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.provisioning import KernelProvisionerFactory

from ..inkernel.errors import GraderError
from ..inkernel.text import cap
from ..inkernel.wire import Status
from ..settings import KERNEL_START_TIMEOUT
from .safeio import is_kernel_socket, lock_dir, make_private_dir, remove_tree
from .sandbox import Jail, kernel_argv, write_launcher_files

KERNEL_NAME = "python3"  # Gradescope's kernel; whatever the notebook names is ignored
MAX_MESSAGE = 4 << 20  # a shell message larger than this drops the connection (the run then times out)
MAX_QUEUED = 32  # shell messages queued in the grader at most
INTERRUPT_GRACE = 5.0
MAX_SOCKET_PATH = 100  # a Unix socket's path holds at most 107 bytes; the kernel appends "-<port>"


class KernelStartError(GraderError):
    """The student's kernel did not start (a broken student environment, or limits too tight)."""


@dataclass(frozen=True)
class Execution:
    """How one execution in the kernel ended: its status, and the error it raised or why it stopped.

    (Not results.Outcome, which says whether a submission's grade exists and whose fault a 0 is.)"""

    status: Status
    error: str = ""


def _context() -> zmq.Context:
    context = zmq.Context()
    context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
    context.setsockopt(zmq.RCVHWM, MAX_QUEUED)
    context.setsockopt(zmq.RECONNECT_IVL, -1)  # never reconnect to a path that may have changed since it was checked
    return context


def load_before_fork() -> None:
    """Work out once, in the process that forks the grading processes, what every kernel start would otherwise
    work out afresh in each: jupyter_client's kernel provisioners, found by reading every installed package's
    entry points (about 20 ms a start). The factory is a singleton, which the forked processes inherit."""
    KernelProvisionerFactory.instance()


class Kernel:
    """One python3 kernel of one submission, started through its jail; restarts get fresh folders."""

    def __init__(self, jail: Jail, notebook_name: str, notebook_bytes: bytes, startup_timeout: float = KERNEL_START_TIMEOUT):
        self.jail, self.startup_timeout = jail, startup_timeout
        self.notebook = (notebook_name, notebook_bytes)
        self.generation = 0  # how many times a kernel was started: a change means state was lost
        # a last look at the calls' folders once the kernel has ended, before a restart removes them (Session.calls)
        self.before_restart: Callable[[], None] | None = None
        self.km = self.kc = self.context = self.log = self.folder = None
        self._start()

    # ---- starting ----------------------------------------------------------------------------------

    def _start(self) -> None:
        self.generation += 1
        self.stops_before = len(self.jail.stopped())  # the guards' stops of the kernels before this one
        jail, plan = self.jail, self.jail.plan
        # unguessable: the jail's base cannot be listed, so no later kernel of a reused uid finds this
        # folder (with the notebook in it) if a killed grader ever leaves it behind
        folder = self.folder = make_private_dir(jail.base, f"start-{self.generation}-{secrets.token_hex(8)}")
        self.workdir = jail.kernel_dir(folder, "work", {self.notebook[0]: self.notebook[1]})
        tmpdir = jail.kernel_dir(folder, "tmp")
        conn_dir = make_private_dir(folder, "conn")
        sock_dir = jail.kernel_dir(folder, "sock")
        if len(os.fsencode(sock_dir / "k-00000")) > MAX_SOCKET_PATH:
            raise KernelStartError(f"the kernel's socket folder {sock_dir} is too long for a Unix socket: set TMPDIR "
                                   "to a shorter folder (such as /tmp)")
        kernels = write_launcher_files(folder, jail.launch_config(self.workdir, tmpdir, conn_dir, sock_dir), kernel_argv(plan))
        self.context = _context()
        specs = KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)
        self.km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs, context=self.context,
                                transport="ipc", ip=str(sock_dir / "k"))
        self.km.connection_file = str(conn_dir / "grader.json")
        self.log_path = folder / "kernel.log"
        # the launcher's and kernel's own output (capped by RLIMIT_FSIZE); the grader's alone: other kernels can
        # pass through this folder, and a classmate's raw output is not theirs to read
        self.log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb")
        deadline = time.monotonic() + self.startup_timeout
        try:
            self.km.start_kernel(cwd=str(folder), env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                 stdout=self.log, stderr=self.log)
            self._check_sockets(sock_dir, deadline)
            self.kc = self.km.client()
            self.kc.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
            self._wait_for_ready(deadline)
        except KernelStartError:
            self.shutdown()
            raise
        except Exception as err:  # noqa: BLE001 - jupyter_client raises many kinds
            self.shutdown()
            raise KernelStartError(f"the notebook's kernel did not start ({type(err).__name__}: {cap(str(err), 200)})") from None

    def _fail_start(self, why: str) -> KernelStartError:
        self.log.flush()
        try:
            tail = self.log_path.read_bytes()[-600:].decode(errors="replace")
        except OSError:
            tail = ""
        return KernelStartError(f"the notebook's kernel did not start ({why}): {tail}")

    def _check_sockets(self, sock_dir: Path, deadline: float) -> None:
        """Wait for the kernel's five sockets, take the folder back (root's, 0700: no other uid reaches them),
        and check each with lstat: a socket of the kernel's uid, with no group or other bits."""
        info = self.km.get_connection_info()
        paths = [Path(f"{info['ip']}-{info[port]}") for port in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")]
        while not all(p.exists() or p.is_symlink() for p in paths):
            if not self.km.is_alive():
                raise self._fail_start("it exited")
            if time.monotonic() > deadline:
                raise self._fail_start("no sockets")
            time.sleep(0.02)
        lock_dir(sock_dir, 0o700)  # from here on the kernel cannot swap an entry, nor anyone else reach one
        owner = self.jail.owner if self.jail.own_uid else None
        if not all(is_kernel_socket(p, owner) for p in paths):
            raise self._fail_start("its sockets were replaced, or others could connect to them")

    def _wait_for_ready(self, deadline: float) -> None:
        msg_id = self.kc.kernel_info()
        while time.monotonic() < deadline:
            if not self.km.is_alive():
                raise self._fail_start("it exited")
            if self._next_reply(msg_id, 0.1) is not None:
                return
        raise self._fail_start("no answer")

    def _next_reply(self, msg_id: str, timeout: float) -> dict | None:
        """The content of the shell reply to ``msg_id``, or None; anything else is skipped, malformed or not."""
        try:
            msg = self.kc.get_shell_msg(timeout=timeout)
        except queue.Empty:
            return None
        except (ValueError, TypeError, KeyError, RecursionError, MemoryError, zmq.ZMQError):
            return None  # unreadable, unsigned or oversized: not a reply
        parent = msg.get("parent_header") if isinstance(msg, dict) else None
        if not isinstance(parent, dict) or parent.get("msg_id") != msg_id:
            return None
        content = msg.get("content")
        return content if isinstance(content, dict) else {"status": "error", "ename": "MalformedReply"}

    # ---- running code ------------------------------------------------------------------------------

    def run(self, code: str, timeout: float, progress: Callable[[], int] | None = None, until: float | None = None) -> Execution:
        """Execute ``code``; wait at most ``timeout`` seconds (then interrupt, then restart). With ``progress`` (how many
        steps of the code are done, as the grader sees it: the replies of a batch of calls), each step gets its own
        ``timeout``, counted from the step before it; ``until`` (time.monotonic) caps every step."""
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False, stop_on_error=False)
        step, done = time.monotonic(), 0
        while True:
            if not self.km.is_alive():
                return Execution(Status.DEAD, "the kernel died (the code exited or crashed it)")
            if progress is not None and (now_done := progress()) > done:
                step, done = time.monotonic(), now_done
            now = time.monotonic()
            if now > step + timeout or (until is not None and now > until):
                return self._interrupt(msg_id, min(now - step, timeout))
            content = self._next_reply(msg_id, 0.1)
            if content is None:
                continue
            if content.get("status") == "ok":
                return Execution(Status.OK)
            return Execution(Status.ERROR, f"{cap(content.get('ename'), 80) or 'Error'}: {cap(content.get('evalue'), 300)}")

    def _interrupt(self, msg_id: str, timeout: float) -> Execution:
        """Interrupt a run past its time; restart the kernel if the interrupt does not take."""
        try:
            self.km.interrupt_kernel()
        except Exception:  # noqa: BLE001 - the kernel may be gone already
            pass
        deadline = time.monotonic() + INTERRUPT_GRACE
        while time.monotonic() < deadline and self.km.is_alive():
            if self._next_reply(msg_id, 0.2) is not None:
                return Execution(Status.TIMEOUT, f"stopped after {timeout:.0f} s")
        self.restart()
        return Execution(Status.TIMEOUT, f"stopped after {timeout:.0f} s (the kernel had to be restarted)")

    # ---- stopping ----------------------------------------------------------------------------------

    def restart(self) -> None:
        self.shutdown()
        if self.before_restart is not None:
            self.before_restart()
        # the calls' folders hold nothing a later call reads; what the ended kernel wrote there goes with it (in memory,
        # its files stay charged to the kernel's cgroup, which the next kernel joins: they could leave it no room to start)
        self.jail.clear_calls()
        stops_before = self.stops_before
        try:
            self._start()
        except KernelStartError:
            if len(self.jail.stopped()) == stops_before:
                raise
            # a guard stopped the kernel before: one that finds it over a bound after it ended (the cgroup's OOM killer
            # was first) ends what the cgroup holds then, which may be this kernel, starting
            self.shutdown()
            self._start()

    def shutdown(self) -> None:
        """Stop this kernel and every process it started (the jail ends them all)."""
        if self.kc is not None:
            try:
                self.kc.shell_channel.stop()
            except Exception:  # noqa: BLE001
                pass
            self.kc = None
        if self.km is not None:
            try:
                if self.km.has_kernel:
                    self.km.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001
                pass
            self.km = None
        self.jail.kill_processes()
        if self.folder is not None:
            remove_tree(self.folder)  # never follows the kernel's links, however deep its folders go
        if self.context is not None:
            self.context.destroy(linger=0)
            self.context = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def is_alive(self) -> bool:
        return self.km is not None and self.km.is_alive()
