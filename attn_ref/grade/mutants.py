"""Probing an assignment's declared mutants (wrong implementations) in one kernel: which probes each fails.

`attn-ref check` uses it to prove that every hidden probe is failed by at least one mutant. The notebook
(the solution) runs once; each mutant's source is run in the kernel in place of the student's function,
the task's probes run, and the solution's own cell is run again before the next task.
"""

from __future__ import annotations

import time

from . import submission
from .core import prepare, running
from .isolation.sandbox import Jail, SandboxPlan
from .isolation.watchdog import run_alone
from .scoring.functions import grade_task
from .settings import Limits
from .wire import Status


def probe_mutants(notebook_path, autograder, mutants: dict[str, list[tuple[str, str]]], *,
                  plan: SandboxPlan | None = None, **timeouts: float) -> dict[str, dict[str, dict[str, bool]]]:
    """{"probes": {task: {mutant label: {probe name: passed}}}, "errors": {task: {label: what its cell raised}}}
    for the given {task: [(label, source)]}. A mutant whose cell fails is not graded: the solution's
    function would still be in place, and its probes would pass for the wrong reason."""
    autograder, plan = prepare(autograder, plan)
    limits = Limits.of(**timeouts)
    budget = 120.0 + 20.0 * sum(len(m) for m in mutants.values())

    def run(jail: Jail) -> dict:
        nb, filename = submission.load(notebook_path)
        cells = [c.source for c in nb.cells if c.cell_type == "code"]
        verdicts: dict = {}
        errors: dict = {}
        with running(nb, filename, autograder, jail, limits, time.monotonic() + budget) as ctx:
            by_name = autograder.checks.by_name
            for t_index, task in enumerate(autograder.units):
                own = next((c for c in cells if f"def {task.function}(" in c), None)
                for label, source in mutants.get(task.name, []):
                    ran = ctx.session.kernel.run(f"{task.function} = None\n{source}", timeout=limits.cell)
                    if ran.status is not Status.OK:
                        errors.setdefault(task.name, {})[label] = ran.error or ran.status.value
                        continue
                    _, extra, _ = grade_task(ctx, t_index, task, by_name, [])
                    verdicts.setdefault(task.name, {})[label] = {p["probe"]: p["passed"] for p in extra["probes"]}
                if own is not None and mutants.get(task.name):
                    ctx.session.kernel.run(own, timeout=limits.cell)
        return {"mutants": {"probes": verdicts, "errors": errors}}

    return run_alone(plan, "mutants", run, budget, "mutants")
