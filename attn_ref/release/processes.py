"""The commands the release verbs start (the check's bundled grader and its sweep), each in a process group of
its own, ended with everything it started when the verb stops early: a timeout, Ctrl-C, or SIGTERM, which
build._terminable turns into Ctrl-C. Left alone, a sweep's processes ran on for ten minutes and more after the
build that started them was gone."""

from __future__ import annotations

import os
import signal
import subprocess

GRACE = 10.0  # seconds a group has to end its own children (the grader ends its kernels on SIGTERM)


def start(command: list[str], **options) -> subprocess.Popen:
    """The command, started in a session (and so a process group) of its own."""
    return subprocess.Popen(command, start_new_session=True, **options)


def end(process: subprocess.Popen) -> None:
    """End the process's whole group: SIGTERM, then SIGKILL after GRACE seconds."""
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            process.wait(timeout=wait)
            if sig == signal.SIGTERM:
                os.killpg(process.pid, signal.SIGKILL)  # what it started and left behind
        except subprocess.TimeoutExpired:
            continue
        except (ProcessLookupError, PermissionError):
            pass
        break
    process.wait()


def run(command: list[str], timeout: float | None = None, **options) -> subprocess.CompletedProcess:
    """subprocess.run's result, the command in a group of its own; on a timeout or an interrupt the whole group
    is ended before the exception goes on."""
    with start(command, **options) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            end(process)
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
