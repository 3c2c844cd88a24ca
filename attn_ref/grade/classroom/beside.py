"""Work done beside the TA's process: in a forked child while the process goes on, so that the gradebook's two
slowest parts (drawing the plots with matplotlib, and measuring the class's similarity for report.html) take one
core each instead of one after the other. Only where this process has no other thread (a fork copies one thread:
a lock another holds would stay held in the child); elsewhere the work is done at once, here."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import traceback
from collections.abc import Callable

PR_SET_NAME = 15


def beside(work: Callable[[], None], name: str = "attn-ref beside") -> Callable[[], bool]:
    """Start ``work()``; returns a wait that says whether it ran through (in the child, or here at once). Its files
    are written by the child; a child that failed leaves the caller to do the work again where its error is seen.
    ``name``: the child's process name (as `ps` and `top` show it; 15 bytes at most)."""
    if threading.active_count() > 1 or not hasattr(os, "fork"):
        work()
        return lambda: True
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 1
        try:
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
            work()
            code = 0
        except BaseException:  # noqa: BLE001 - said on stderr; the parent does the work again
            traceback.print_exc()
        finally:
            os._exit(code)

    def wait() -> bool:
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                return os.waitstatus_to_exitcode(status) == 0
            except InterruptedError:
                continue
            except ChildProcessError:  # reaped by someone else: its files say whether it ran
                return False

    return wait
