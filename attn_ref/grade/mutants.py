"""Probing an assignment's declared mutants (wrong implementations) and its derived stubs in one kernel.

`attn-ref check` uses it to prove that every hidden probe is failed by at least one mutant, and that no
stub (stubs.py, or a mutant marked `# stub`) earns a point. The notebook (the solution) runs once; each
mutant's source is run in the kernel in place of the student's function, the task is graded as a
submission would be, and the solution's own cell is run again before the next task.
"""

from __future__ import annotations

import time

from . import stubs, submission
from .core import prepare, running
from .isolation.sandbox import Jail, SandboxPlan
from .isolation.watchdog import run_alone
from .scoring.checks import FunctionUnit
from .scoring.context import GradingContext
from .scoring.functions import grade_task
from .settings import Limits
from .wire import Status


def _verdict(result: dict, extra: dict) -> dict:
    return {"probes": {p["probe"]: p["passed"] for p in extra["probes"]}, "score": result["score"],
            "max_score": result["max_score"], "credited": extra["credited"]}


def _stub_verdicts(ctx: GradingContext, t_index: int, task: FunctionUnit, limits: Limits) -> tuple[dict, dict]:
    """{kind: verdict} of the task's derived stubs, each defined again before every probe (its shapes are
    the reference's on that probe's inputs), and {kind: error} of any whose cell raised."""
    verdicts, errors = {}, {}
    for kind in stubs.KINDS:
        raised: list[str] = []

        def define(probe, args, reference, kind=kind, raised=raised) -> None:
            ran = ctx.session.kernel.run(stubs.source(kind, task, probe, reference), timeout=limits.cell)
            if ran.status is not Status.OK:
                raised.append(ran.error or ran.status.value)

        result, extra, _ = grade_task(ctx, t_index, task, ctx.checks.by_name, [], before_call=define)
        if raised:
            errors[kind] = raised[0]
        else:
            verdicts[kind] = _verdict(result, extra)
    return verdicts, errors


def probe_mutants(notebook_path, autograder, mutants: dict[str, list[tuple[str, str]]], *, with_stubs: bool = False,
                  plan: SandboxPlan | None = None, **timeouts: float) -> dict:
    """For the given {task: [(label, source)]}: {"probes": {task: {label: {probe name: passed}}}, "scores":
    {task: {label: {"score", "max_score", "credited": [lines that earned points]}}}, "errors": {task: {label:
    what its cell raised}}}, and with ``with_stubs`` "stubs": {task: {kind: verdict}} (stubs.KINDS). A mutant
    whose cell fails is not graded: the solution's function would still be in place, and its probes would
    pass for the wrong reason."""
    autograder, plan = prepare(autograder, plan)
    limits = Limits.of(**timeouts)
    tasks = [u for u in autograder.units if isinstance(u, FunctionUnit)]
    budget = 120.0 + 20.0 * (sum(len(m) for m in mutants.values()) + with_stubs * len(stubs.KINDS) * len(tasks))

    def run(jail: Jail) -> dict:
        nb, filename = submission.load(notebook_path)
        cells = [c.source for c in nb.cells if c.cell_type == "code"]
        found: dict = {"probes": {}, "scores": {}, "errors": {}, "stubs": {}}
        with running(nb, filename, autograder, jail, limits, time.monotonic() + budget) as ctx:
            for t_index, task in enumerate(autograder.units):
                if not isinstance(task, FunctionUnit):
                    continue
                own = next((c for c in cells if f"def {task.function}(" in c), None)
                for label, source in mutants.get(task.name, []):
                    ran = ctx.session.kernel.run(f"{task.function} = None\n{source}", timeout=limits.cell)
                    if ran.status is not Status.OK:
                        found["errors"].setdefault(task.name, {})[label] = ran.error or ran.status.value
                        continue
                    verdict = _verdict(*grade_task(ctx, t_index, task, ctx.checks.by_name, [])[:2])
                    found["probes"].setdefault(task.name, {})[label] = verdict.pop("probes")
                    found["scores"].setdefault(task.name, {})[label] = verdict
                if with_stubs:
                    verdicts, errors = _stub_verdicts(ctx, t_index, task, limits)
                    found["stubs"][task.name] = verdicts
                    for kind, error in errors.items():
                        found["errors"].setdefault(task.name, {})[f"stub: {kind}"] = error
                if own is not None and (mutants.get(task.name) or with_stubs):
                    ctx.session.kernel.run(own, timeout=limits.cell)
        return {"mutants": found}

    return run_alone(plan, "mutants", run, budget, "mutants")
