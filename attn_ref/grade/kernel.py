"""The student's notebook in its own Jupyter kernel (jupyter_client), driven from the grader's process.

The grader only sends code and reads files of plain data back; it never unpickles or executes anything
the kernel produces. Each call has a timeout; a kernel that dies or hangs is restarted and the notebook
re-run, so the remaining probes still get graded.
"""

from __future__ import annotations

import os
import queue
import time
from dataclasses import dataclass

from jupyter_client.manager import start_new_kernel

KERNEL_NAME = "python3"  # Gradescope's kernel; whatever the notebook names is ignored


@dataclass
class Outcome:
    status: str  # "ok" | "error" | "timeout" | "dead"
    error: str = ""


class Kernel:
    """One python3 kernel, started in ``workdir``."""

    def __init__(self, workdir: str, env: dict | None = None, startup_timeout: float = 60, log_path: str = os.devnull):
        self.workdir, self.env, self.startup_timeout = workdir, env, startup_timeout
        self.log = open(log_path, "ab")  # the kernel process's own stdout/stderr (not the notebook's outputs)
        self.generation = 0  # how many times a kernel was started: a change means state was lost
        self._start()

    def _start(self):
        self.generation += 1
        extra = {"env": self.env} if self.env is not None else {}
        extra.update(stdout=self.log, stderr=self.log)
        self.km, self.kc = start_new_kernel(
            kernel_name=KERNEL_NAME, cwd=self.workdir, startup_timeout=self.startup_timeout, **extra
        )

    def run(self, code: str, timeout: float) -> Outcome:
        """Execute ``code``; wait at most ``timeout`` seconds. Outputs are drained and discarded."""
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        while True:
            if not self.km.is_alive():
                return Outcome("dead", "the kernel died (the notebook exited or crashed it)")
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
        """Interrupt a call past its time; restart the kernel if the interrupt does not take."""
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
        return Outcome("timeout", f"stopped after {timeout:.0f} s (kernel restarted)")

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
