"""Probing an assignment's declared mutants (wrong implementations) and its derived stubs in one kernel.

`attn-ref check` uses it to prove that every hidden probe is failed by at least one mutant, and that no
stub (stubs.py, or a mutant marked `# stub`) earns a point. The notebook (the solution) runs once; each
mutant's source is run in the kernel in place of the student's function, the task is graded as a
submission would be, and the solution's own cell is run again before the next task.
"""

from __future__ import annotations

import time

from ..checks_json import FunctionUnit
from ..core import prepare, running
from ..inkernel.wire import Status
from ..intake import submission
from ..isolation.sandbox import Jail, SandboxPlan
from ..isolation.watchdog import run_alone
from ..results import ProbeEvidence, TestResult
from ..scoring.context import GradingContext
from ..scoring.functions import TaskEvidence, grade_task
from ..settings import Limits
from . import stubs


def _verdict(gradings: list[tuple[TestResult, TaskEvidence]], says: str = "") -> dict:
    """One mutant's or stub's gradings, one per seed, summed up: how many seeds each probe passed under,
    how many seeds it passed every probe under, its best score and the lines that paid it, and how many
    seeds a failed line named it (``says``: its words) as the known mistake it is."""
    passed: dict[str, int] = {}
    clean, best, most, credited, recognised = 0, 0, 0, [], 0
    for result, extra in gradings:
        probes = [ProbeEvidence.load(p) for p in extra.probes]
        recognised += bool(says) and any(p.mistake == says for p in probes)
        for p in probes:
            passed[p.probe] = passed.get(p.probe, 0) + bool(p.passed)
        clean += all(p.passed for p in probes)
        most = result.max_score
        if result.score > best:
            best, credited = result.score, extra.credited
    return {"passed": passed, "seeds": len(gradings), "clean_seeds": clean, "score": best, "max_score": most,
            "credited": credited, "recognised": recognised}


def _graded(ctx: GradingContext, t_index: int, task: FunctionUnit, seeds: range, before_call=None, says: str = "") -> dict:
    gradings = []
    for seed in seeds:
        ctx.seed = seed
        ctx.name_mistakes = bool(says) and seed == seeds[0]  # whether its lines name it: one seed tells (each costs the runner)
        result, extra, _ = grade_task(ctx, t_index, task, ctx.checks.by_name, [], before_call=before_call)
        gradings.append((result, extra))
        ctx.session.clear_exchanges()
    return _verdict(gradings, says)


def _stub_verdicts(ctx: GradingContext, t_index: int, task: FunctionUnit, limits: Limits, seeds: range) -> tuple[dict, dict]:
    """{kind: verdict} of the task's derived stubs, each defined again before every probe (its shapes are
    the reference's on that probe's inputs), and {kind: error} of any whose cell raised."""
    verdicts, errors = {}, {}
    for kind in stubs.KINDS:
        raised: list[str] = []

        def define(probe, args, reference, kind=kind, raised=raised) -> None:
            ran = ctx.session.kernel.run(stubs.source(kind, task, probe, reference), timeout=limits.cell)
            if ran.status is not Status.OK:
                raised.append(ran.error or ran.status.value)

        verdict = _graded(ctx, t_index, task, seeds, before_call=define)
        if raised:
            errors[kind] = raised[0]
        else:
            verdicts[kind] = verdict
    return verdicts, errors


def probe_mutants(notebook_path, autograder, mutants: dict[str, list[tuple[str, str]]], *, with_stubs: bool = False,
                  seeds: int = 1, plan: SandboxPlan | None = None, **timeouts: float) -> dict:
    """For the given {task: [(label, source)]}, each graded under seeds 0 .. ``seeds`` - 1: {"mutants": {task:
    {label: VERDICT}}, "errors": {task: {label: what its cell raised}}}, and with ``with_stubs`` "stubs": {task:
    {kind: VERDICT}} (stubs.KINDS); VERDICT = {"passed": {probe: seeds it passed under}, "seeds", "clean_seeds":
    seeds it passed every probe under, "score": its best, "max_score", "credited": the lines that paid that}.
    A mutant whose cell fails is not graded: the solution's function would still be in place, and its
    probes would pass for the wrong reason."""
    autograder, plan = prepare(autograder, plan)
    limits = Limits.of(**timeouts)
    tasks = [u for u in autograder.units if isinstance(u, FunctionUnit)]
    budget = 120.0 + 20.0 * seeds * (sum(len(m) for m in mutants.values()) + with_stubs * len(stubs.KINDS) * len(tasks))

    def run(jail: Jail) -> dict:
        nb, filename = submission.load(notebook_path)
        cells = [c.source for c in nb.cells if c.cell_type == "code"]
        graded: dict = {}  # {task: {label: VERDICT}}
        errors: dict = {}  # {task: {label: what its cell raised}}
        stubbed: dict = {}  # {task: {kind: VERDICT}}
        with running(nb, filename, autograder, jail, limits, time.monotonic() + budget) as ctx:
            for t_index, task in enumerate(autograder.units):
                if not isinstance(task, FunctionUnit):
                    continue
                own = next((c for c in cells if f"def {task.function}(" in c), None)
                words = {m.source: m.says for m in task.mistakes}
                for label, source in mutants.get(task.name, []):
                    ran = ctx.session.kernel.run(f"{task.function} = None\n{source}", timeout=limits.cell)
                    if ran.status is not Status.OK:
                        errors.setdefault(task.name, {})[label] = ran.error or ran.status.value
                        continue
                    graded.setdefault(task.name, {})[label] = _graded(ctx, t_index, task, range(seeds),
                                                                      says=words.get(source, ""))
                if with_stubs:
                    stubbed[task.name], raised = _stub_verdicts(ctx, t_index, task, limits, range(seeds))
                    for kind, error in raised.items():
                        errors.setdefault(task.name, {})[f"stub: {kind}"] = error
                if own is not None and (mutants.get(task.name) or with_stubs):
                    ctx.session.kernel.run(own, timeout=limits.cell)
        return {"mutants": {"mutants": graded, "errors": errors, "stubs": stubbed}}

    return run_alone(plan, "mutants", run, budget, "mutants")
