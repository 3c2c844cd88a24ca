"""A graded run of one notebook: its kernel, the cells that run, and the calls the grader makes into it."""

from __future__ import annotations

import ast
import json
import secrets
from importlib import resources
from pathlib import Path

from .kernel import Kernel, Outcome

EXPLORATION_TAG = "exploration"
HARNESS_SOURCE = resources.files(__package__).joinpath("harness.py").read_text()


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


class NotebookSession:
    """Runs the notebook once in a kernel, then serves calls; re-runs it after a restart."""

    def __init__(self, cells: list[str], workdir: Path, cell_timeout: float):
        self.cells, self.workdir, self.cell_timeout = cells, workdir, cell_timeout
        self.handle = f"_grader_{secrets.token_hex(6)}"  # the harness's name in the kernel, unguessable
        self.errors: list[str] = []
        self.restarts = 0
        self.kernel = Kernel(str(workdir), log_path=str(workdir.parent / "kernel.log"))
        self._prepare()

    def _prepare(self):
        grading_mode = (
            "try:\n    import otter as _o\n    _o.Notebook.init_grading_mode('.')\n    del _o\n"
            "except Exception:\n    pass"
        )
        self.kernel.run(grading_mode, timeout=60)
        errors = []
        for index, source in enumerate(self.cells):
            outcome = self.kernel.run(source, timeout=self.cell_timeout)
            if outcome.status != "ok":
                errors.append(f"code cell {index + 1}: {outcome.error}")
            if outcome.status == "dead":
                self.kernel.restart()
                self.restarts += 1
        install = f"{self.handle} = {{}}\nexec(compile({HARNESS_SOURCE!r}, '<grader>', 'exec'), {self.handle})"
        self.kernel.run(install, timeout=60)
        if not self.errors:
            self.errors = errors

    def call(self, helper: str, *args, timeout: float) -> Outcome:
        code = f"{self.handle}[{helper!r}](" + ", ".join(repr(a) for a in args) + ")"
        generation = self.kernel.generation
        outcome = self.kernel.run(code, timeout=timeout)
        if outcome.status == "dead":
            self.kernel.restart()
        if self.kernel.generation != generation:
            self.restarts += 1
            self._prepare()  # a fresh kernel: run the notebook again for the calls still to come
        return outcome

    def read_json(self, helper: str, path: Path, *args, timeout: float) -> tuple[dict | None, Outcome]:
        outcome = self.call(helper, *args, str(path), timeout=timeout)
        if outcome.status == "ok" and path.exists():
            return json.loads(path.read_text()), outcome
        return None, outcome

    def shutdown(self):
        self.kernel.close()
