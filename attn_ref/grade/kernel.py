"""The student's notebook in its own Jupyter kernel (jupyter_client), driven from the grader's process.

The grader only sends code and reads files of plain data back; it never unpickles or executes anything
the kernel produces. Each run has a timeout; a kernel that hangs past an interrupt is restarted.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass
from pathlib import Path

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from .sandbox import Sandbox

KERNEL_NAME = "python3"  # Gradescope's kernel; whatever the notebook names is ignored


class KernelStartError(Exception):
    """The student's kernel did not start (a broken student environment, or limits too tight)."""


@dataclass
class Outcome:
    status: str  # "ok" | "error" | "timeout" | "dead"
    error: str = ""


class Kernel:
    """One python3 kernel in ``workdir``, launched through the sandbox."""

    def __init__(self, workdir: Path, folder: Path, sandbox: Sandbox, startup_timeout: float = 60):
        self.workdir, self.startup_timeout = workdir, startup_timeout
        self.kernels_dir, self.env = sandbox.prepare(folder, workdir)
        self.log_path = folder / "kernel.log"
        self.log = open(self.log_path, "ab")  # the kernel process's own stdout/stderr, not the notebook's
        self.generation = 0  # how many times a kernel was started: a change means state was lost
        self._start()

    def _start(self):
        self.generation += 1
        specs = KernelSpecManager(kernel_dirs=[str(self.kernels_dir)], ensure_native_kernel=False)
        self.km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
        self.km.start_kernel(cwd=str(self.workdir), env=self.env, stdout=self.log, stderr=self.log)
        self.kc = self.km.client()
        self.kc.start_channels()
        try:
            self.kc.wait_for_ready(timeout=self.startup_timeout)
        except RuntimeError:
            self.shutdown()
            self.log.flush()
            tail = self.log_path.read_text(errors="replace")[-500:]
            raise KernelStartError(f"the notebook's kernel did not start: {tail}") from None

    def run(self, code: str, timeout: float) -> Outcome:
        """Execute ``code``; wait at most ``timeout`` seconds. Outputs are drained and discarded."""
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        while True:
            if not self.km.is_alive():
                return Outcome("dead", "the kernel died (the code exited or crashed it)")
            if time.monotonic() > deadline:
                return self._interrupt(msg_id, timeout)
            try:
                msg = self.kc.get_shell_msg(timeout=0.1)
            except queue.Empty:
                self._drain_iopub()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            self._drain_iopub()
            content = msg["content"]
            if content.get("status") == "ok":
                return Outcome("ok")
            return Outcome("error", f"{content.get('ename', 'Error')}: {str(content.get('evalue', ''))[:300]}")

    def _interrupt(self, msg_id: str, timeout: float) -> Outcome:
        """Interrupt a run past its time; restart the kernel if the interrupt does not take."""
        self.km.interrupt_kernel()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.km.is_alive():
            try:
                msg = self.kc.get_shell_msg(timeout=0.2)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return Outcome("timeout", f"stopped after {timeout:.0f} s")
        self.restart()
        return Outcome("timeout", f"stopped after {timeout:.0f} s (the kernel had to be restarted)")

    def _drain_iopub(self):
        while True:
            try:
                self.kc.get_iopub_msg(timeout=0)
            except queue.Empty:
                return

    def restart(self):
        self.shutdown()
        self._start()

    def shutdown(self):
        try:
            self.kc.stop_channels()
        finally:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)

    def close(self):
        self.shutdown()
        self.log.close()
