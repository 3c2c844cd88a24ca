"""A graded run of one notebook: its kernel, the cells that run, and the calls the grader makes into it."""

from __future__ import annotations

import ast
import json
import secrets
import time
from importlib import resources
from pathlib import Path

import psutil

from .kernel import Kernel, Outcome
from .sandbox import Sandbox, end_processes
from .scoring import read_reply

EXPLORATION_TAG = "exploration"
HARNESS_SOURCE = resources.files(__package__).joinpath("harness.py").read_text()
GRADING_MODE = "try:\n    import otter as _o\n    _o.Notebook.init_grading_mode('.')\n    del _o\nexcept Exception:\n    pass"


def is_otter_call(source: str) -> bool:
    """A cell that only calls grader.check/check_all/export: nothing to grade, skipped."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and all(
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id == "grader"
        and stmt.value.func.attr in ("check", "check_all", "export", "to_pdf")
        for stmt in body
    )


def runnable_cells(nb) -> list[str]:
    """Code cells to run while grading: exploration cells and bare grader.check() cells are skipped."""
    return [
        cell.source
        for cell in nb.cells
        if cell.cell_type == "code"
        and EXPLORATION_TAG not in cell.get("metadata", {}).get("tags", [])
        and not is_otter_call(cell.source)
    ]


class BudgetExhausted(Exception):
    """The overall time budget ran out."""


class NotebookSession:
    """Runs the notebook once in a sandboxed kernel, then serves calls; re-runs it after a restart.

    A cell that kills the kernel is skipped on the re-run, so one ``os._exit`` costs only what it breaks.
    """

    def __init__(self, cells: list[str], workdir: Path, folder: Path, sandbox: Sandbox, *,
                 cell_timeout: float, notebook_timeout: float, deadline: float):
        self.cells, self.cell_timeout, self.notebook_timeout, self.deadline = cells, cell_timeout, notebook_timeout, deadline
        self.handle = f"_grader_{secrets.token_hex(6)}"  # the harness's name in the kernel, unguessable
        self.errors: list[str] = []
        self.deadly: set[int] = set()  # cells that killed the kernel
        self.restarts = 0
        self.sandbox = sandbox
        self._before = {p.pid for p in psutil.Process().children(recursive=True)}
        self.kernel = Kernel(workdir, folder, sandbox)
        self._prepare()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def _prepare(self):
        """Run the notebook (minus cells known to kill the kernel), then install the harness."""
        while True:
            generation = self.kernel.generation
            self.kernel.run(GRADING_MODE, timeout=60)
            self.errors = []
            stop = time.monotonic() + min(self.notebook_timeout, max(self.remaining(), 0))
            for index, source in enumerate(self.cells):
                if index in self.deadly:
                    self.errors.append(f"code cell {index + 1}: skipped (it crashed the kernel)")
                    continue
                left = min(self.cell_timeout, stop - time.monotonic())
                if left <= 0:
                    self.errors.append(f"code cell {index + 1} and later: not run (the notebook ran out of time)")
                    break
                outcome = self.kernel.run(source, timeout=left)
                if outcome.status != "ok":
                    self.errors.append(f"code cell {index + 1}: {outcome.error}")
                if outcome.status == "dead" or self.kernel.generation != generation:
                    self.deadly.add(index)
                    self.restarts += 1
                    if outcome.status == "dead":
                        self.kernel.restart()
                    break
            else:
                break
            if self.remaining() <= 0:
                break
        install = f"{self.handle} = {{}}\nexec(compile({HARNESS_SOURCE!r}, '<grader>', 'exec'), {self.handle})"
        self.kernel.run(install, timeout=60)

    def call(self, helper: str, *args, timeout: float) -> Outcome:
        left = min(timeout, self.remaining())
        if left <= 1:
            raise BudgetExhausted()
        code = f"{self.handle}[{helper!r}](" + ", ".join(repr(a) for a in args) + ")"
        generation = self.kernel.generation
        outcome = self.kernel.run(code, timeout=left)
        if outcome.status == "dead":
            self.kernel.restart()
        if self.kernel.generation != generation:
            self.restarts += 1
            self._prepare()  # a fresh kernel: run the notebook again for the calls still to come
        return outcome

    def read_json(self, helper: str, path: Path, *args, timeout: float) -> tuple[dict | None, Outcome]:
        outcome = self.call(helper, *args, str(path), timeout=timeout)
        if outcome.status == "ok" and path.exists():
            try:
                reply = json.loads(read_reply(path))
            except (ValueError, OSError):  # not JSON, not a plain file, too large
                return None, Outcome("error", "unreadable reply")
            return (reply, outcome) if isinstance(reply, dict) else (None, Outcome("error", "unreadable reply"))
        return None, outcome

    def shutdown(self) -> int:
        """Stop the kernel and end every process it left behind; returns how many were ended."""
        try:
            self.kernel.close()
        finally:
            ended = end_processes(self._before, self.sandbox.user if self.sandbox.exclusive else None)
        return ended
