"""Grading function units: each probe calls the student's function in the kernel on inputs made here,
and the trusted side compares what comes back with the reference."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import withheld
from ..checks_json import FunctionUnit, Probe
from ..inkernel.text import cap
from ..inkernel.wire import Call, CallArg, MalformedReply, Status, parse_call_reply
from ..isolation.kernel import Execution
from ..isolation.safeio import UnsafeReply
from ..results import TestResult, Unnamed, entry
from ..session import BudgetExhausted, Exchange
from . import comparators as scoring
from . import evidence, mutant_match
from .context import REFERENCE_MESSAGE, GradingContext, UnitResults
from .inputs import Input, generate, probe_rng, reference_outputs

MAX_CRASHES = 2  # probes of one task that may kill the kernel before the rest of the task is skipped


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def call_files(task: FunctionUnit, probe: Probe, args: list[Input], substitutes: dict) -> dict[str, bytes]:
    """The call (protocol) and its input arrays, as the files of one exchange's inbox."""
    files, call_args = {}, []
    for i, a in enumerate(args):
        if a.kind == "array":
            files[f"arg{i}.npy"] = _npy(a.data)
            call_args.append(CallArg(a.name, "array", a.keyword, file=f"arg{i}.npy", dtype=str(a.data.dtype), device=probe.device))
        elif a.kind == "device":
            call_args.append(CallArg(a.name, "device", a.keyword, device=a.data))
        else:
            call_args.append(CallArg(a.name, "value", a.keyword, value=a.data))
    call = Call(task.function, task.framework, tuple(call_args), return_inputs="inputs_unchanged" in probe.checks,
                count_projections=tuple(probe.options.get("count_projections", ())), tripwire=bool(task.forbidden),
                calls=int(probe.options.get("calls", 1)), substitutes=substitutes)
    files["call.json"] = json.dumps(call.to_json()).encode()
    return files


def replaced(task: FunctionUnit, by_name: dict[str, FunctionUnit], graded: list[TestResult]) -> list[str]:
    """The earlier units this one builds on that have a substitute and lost points in their own entries.
    One that scored full stays the student's own (with any extra parameters it has)."""
    return [name for name in task.builds_on if name in by_name and by_name[name].substitute
            and any(t.unit == name and t.score < t.max_score for t in graded)]


def stand_ins(by_name: dict[str, FunctionUnit], names: list[str]) -> dict[str, str]:
    """{function: source} of those units, bound while the later task's probes run."""
    return {by_name[name].function: by_name[name].substitute for name in names}


@dataclass(frozen=True)
class Called:
    """One probe's call as it ran: its folders and how its request ended (a batch's calls that replied: OK)."""

    exchange: Exchange
    ran: Execution


def call_ahead(ctx: GradingContext, task: FunctionUnit, todo: list[tuple[int, Probe, list[Input]]], substitutes: dict) -> dict[int, Called]:
    """The task's probes still to run, from the next one on, called in one request (Session.calls): {probe index:
    Called} for those that replied and the first that did not, with the request's status (a timeout, a crash);
    the probes after it never ran and are left out. A request costs more than most calls: about 2.5 ms of the
    kernel's and the grader's CPU each."""
    session = ctx.session
    exchanges = [session.exchange(task.name, call_files(task, probe, args, substitutes)) for _, probe, args in todo]
    try:
        done, ran = session.calls(task.function, exchanges, timeout=ctx.limits.call)
    except BudgetExhausted:
        return {}  # the next probe's own call says so
    if ran.status is Status.OK:
        return {index: Called(exchange, ran) for (index, _, _), exchange in zip(todo, exchanges, strict=True)}
    ahead = {index: Called(exchange, Execution(Status.OK)) for (index, _, _), exchange in zip(todo[:done], exchanges[:done], strict=True)}
    if done < len(todo):
        ahead[todo[done][0]] = Called(exchanges[done], ran)
    return ahead


def run_probe(ctx: GradingContext, task: FunctionUnit, probe: Probe, args: list[Input], reference, substitutes: dict,
              stats: dict, called: Called | None = None) -> tuple[bool, str, tuple, Status]:
    """One call of the student's function (``called``: made already, in a batch), then the trusted comparison;
    (passed, message, forbidden, status). Once a stand-in has reached the kernel, a failure's message holds nothing
    the kernel wrote (withheld.py)."""
    session = ctx.session
    if probe.device in ("cpu", "meta"):
        ctx.called.setdefault(task.name, []).append((probe, args))  # the mutants replay them (_known_mistake)
    if called is None:
        exchange = session.exchange(task.name, call_files(task, probe, args, substitutes))
        ran = session.call("call", task.function, str(exchange.inbox), str(exchange.outbox), timeout=ctx.limits.call)
    else:
        exchange, ran = called.exchange, called.ran
    if ran.status is Status.TIMEOUT:
        return False, f"the call did not finish ({ran.error})", (), ran.status
    if ran.status is Status.DEAD:
        return False, "the call crashed the kernel", (), ran.status
    try:
        reply = parse_call_reply(session.reply(exchange))
    except FileNotFoundError:
        return False, "no result came back from the call", (), Status.MALFORMED
    except (UnsafeReply, MalformedReply, OSError) as err:
        why = withheld.WITHHELD if session.tainted else f"the call's reply was unreadable ({cap(str(err), 120)})"
        return False, why, (), Status.MALFORMED
    if reply.undefined:
        stats["undefined"] = True  # nothing of the student's ran: the class's report counts it as a cell error
    obs = scoring.Observation(reply, exchange.outbox, session.jail.owner, kept=session.kept.get(exchange.outbox))
    ok, message = scoring.check_probe(task, probe, args, reference, obs, stats)
    if not ok and ctx.name_mistakes and not session.tainted and task.mistakes and probe.device in ("cpu", "meta"):
        stats["match"] = _known_mistake(ctx, task, probe, args, reference, obs)  # told once the task's lines are in
    if session.tainted:
        stats.clear()  # a relative error measured from its outputs is the kernel's word too
        if not ok:
            message = withheld.failure(None if reply.ok else reply.error)
    return ok, message, reply.forbidden_called, Status.OK


def _known_mistake(ctx: GradingContext, task: FunctionUnit, probe: Probe, args: list[Input], reference: list,
                   obs: scoring.Observation) -> mutant_match.LineMatch:
    """What the declared mutants say of this failed probe (mutant_match.LineMatch, empty where none ran): the mutants
    run through the kernel's harness on the same call's files; one that keeps state between calls first on the
    task's earlier calls it has not heard yet, so that it holds what the student's function held."""
    if obs.reply.ok and scoring.forms_problem(task, obs.reply):
        return mutant_match.LineMatch()  # nothing to compare (not written yet, the wrong number of values): the runner stays unstarted
    if not obs.reply.ok and not mutant_match.error_could_name(task, obs):
        return mutant_match.LineMatch()  # the task has no mutant marked to be named by its error: the runner stays unstarted
    runner = ctx.mistakes()
    unheard = ctx.called.get(task.name, [])[runner.heard(task):-1] if mutant_match.replayed(task) else []
    found = runner.observations(task, call_files(task, probe, args, {}), [call_files(task, p, a, {}) for p, a in unheard])
    return mutant_match.line_match(task, probe, args, reference, obs, found)


def _tell_mistakes(lines: list[tuple], report: list[dict], matches: list[tuple[int, int, mutant_match.LineMatch]]) -> None:
    """Each failed line's known mistake, told in its message and its report line, unless another failed line of
    the task shows the student's function is not that mistake (LineMatch.contradicted_by): a name is given
    only where it explains every line it was compared on."""
    for line, row, match in matches:
        if match.says and not match.contradicted_by(m for _, _, m in matches if m is not match):
            ok, label, points, message = lines[line]
            lines[line] = (ok, label, points, f"{message}; this matches a known mistake: {match.says}")
            report[row]["mistake"] = match.says


def _one_digit(error: float | None) -> float | None:
    """A relative error as messages give it, one significant digit: few bits of the kernel's outputs."""
    return None if error is None else float(f"{error:.0e}")


@dataclass
class TaskEvidence:
    """What one task's grading records beside its entry: its lines of extra_data["probes"] (task, probe, device,
    dtype, passed, max_error, the known mistake a failed one was recognised as, or the cause where it has none to
    name: results.ProbeEvidence reads them back), the forbidden names it called, and the lines that earned points."""

    probes: list[dict]
    forbidden: list[str]
    credited: list[str]


def _unnamed(ok: bool, status: Status, stats: dict, tainted: bool) -> Unnamed | None:
    """Why a failed line has no mistake a mutant could name (None: one might), for the class's report."""
    if ok:
        return None
    if tainted:
        return Unnamed.STAND_IN
    if status is not Status.OK or stats.get("undefined"):
        return Unnamed.CELL_ERROR
    return Unnamed.NOT_WRITTEN if stats.get("not_written") else None


def _why_not_run(ctx: GradingContext, static_hits: list[str], hung: bool, crashes: int) -> str:
    """Why the task's next probe is not run (a banned reference, a forbidden name in the source, an
    earlier probe that hung or crashed too often), or "" when it is."""
    if crashes >= MAX_CRASHES:
        return "not run: earlier probes of this task crashed the kernel"
    if hung:
        return "not run: an earlier probe of this task did not finish"
    if ctx.banned:
        return REFERENCE_MESSAGE
    if static_hits:
        return f"uses {', '.join(static_hits)}, which this task does not allow"
    return ""


def _call_once(ctx: GradingContext, task: FunctionUnit, probe: Probe, args: list[Input], reference: list,
               substitutes: dict, called: Called | None) -> tuple[bool, str, tuple, Status, dict]:
    """One probe's call: (passed, message, forbidden names the kernel saw, status, its stats)."""
    stats: dict = {}
    if substitutes:
        ctx.session.tainted = True  # before the call that carries them: see withheld.py
    try:
        ok, message, forbidden, status = run_probe(ctx, task, probe, args, reference, substitutes, stats, called)
    except BudgetExhausted:
        ok, message, forbidden, status = False, "not graded: the time budget for this submission ran out", (), Status.BUDGET
    return ok, message, forbidden, status, stats


def _charge_tripwire(lines: list[tuple], tripped: set[str], tainted: bool) -> tuple[list[tuple], set[str]]:
    """A forbidden call the tripwire saw, however it was reached, scores the whole task 0."""
    if tripped and tainted:  # the names are the kernel's word, and it has read a stand-in
        tripped = {withheld.FORBIDDEN_NAMES}
    if not tripped:
        return lines, tripped
    names = ", ".join(sorted(tripped))
    return [(False, label, points, f"called {names}, which this task does not allow") for _, label, points, _ in lines], tripped


def grade_task(ctx: GradingContext, t_index: int, task: FunctionUnit, by_name: dict[str, FunctionUnit],
               graded: list[TestResult], before_call: Callable[[Probe, list[Input], list], None] | None = None,
               ) -> tuple[TestResult, TaskEvidence, bool]:
    """One task's entry, its probe report lines, forbidden calls and the lines that earned points, and
    whether a probe timed out. ``before_call`` (probing stubs, trusted code only) runs before each call."""
    cuda = bool(ctx.env.get("cuda"))
    static_hits = ctx.analysis.forbidden.get(task.name, [])
    lost = replaced(task, by_name, graded)
    substitutes = stand_ins(by_name, lost)
    lines, tripped, report, hung, timed_out, crashes = [], set(), [], False, False, 0
    proven: dict[int, Callable[[], bool]] = {}  # line -> whether it is evidence (no placeholder passes it): see evidence.py
    matches: list[tuple[int, int, mutant_match.LineMatch]] = []  # (line, report row, what the mutants say of it)
    runs = [(i, p) for i, p in enumerate(task.probes) if p.device != "cuda" or cuda]  # no GPU here: a CUDA line is left out
    drawn = {i: generate(p, probe_rng(ctx.seed, t_index, i)) for i, p in runs}
    ahead: dict[int, Called] = {}  # calls made in one request with the probes before them (call_ahead)
    for p_index, probe in runs:
        if why := _why_not_run(ctx, static_hits, hung, crashes):
            lines.append((False, probe.name, probe.points, why))
            continue
        args = drawn[p_index]
        reference = reference_outputs(ctx.autograder.reference(task.reference), args)  # meta probes: its shapes
        proven[len(lines)] = functools.partial(evidence.is_evidence, probe, args, reference)  # worked out where it matters
        if before_call is not None:
            before_call(probe, args, reference)  # trusted probing between calls: one request each
        elif p_index not in ahead:
            if substitutes:
                ctx.session.tainted = True  # before the request that carries them: see withheld.py
            ahead = call_ahead(ctx, task, [(i, p, drawn[i]) for i, p in runs if i >= p_index], substitutes)
        ok, message, forbidden, status, stats = _call_once(ctx, task, probe, args, reference, substitutes, ahead.pop(p_index, None))
        if "match" in stats:
            matches.append((len(lines), len(report), stats["match"]))
        cause = _unnamed(ok, status, stats, ctx.session.tainted)
        report.append({"task": task.name, "probe": probe.name, "device": probe.device, "dtype": probe.dtype,
                       "passed": ok, "max_error": _one_digit(stats.get("max_error")),
                       **({"cause": cause.value} if cause else {})})
        tripped.update(forbidden)
        hung = status in (Status.TIMEOUT, Status.BUDGET)  # spare the budget for the other tasks
        crashes += status is Status.DEAD
        timed_out |= hung
        lines.append((ok, probe.name, probe.points, message))
    _tell_mistakes(lines, report, matches)
    lines, tripped = _charge_tripwire(evidence.credit(lines, proven), tripped, ctx.session.tainted)
    result = entry(task, lines, ctx.checks.visibility, cuda)
    if substitutes:
        functions = ", ".join(f"{by_name[n].function} ({n})" for n in lost)
        result.output += (f"\nNote: your {functions} lost points there; a correct one stood in for it while "
                             f"{task.name} was graded, so its mistakes are charged once (helpers of your own that "
                             f"both use are not replaced).")
    forbidden = sorted(set(static_hits) | tripped)
    credited = [label for ok, label, points, _ in lines if ok and points]
    return result, TaskEvidence(report, forbidden, credited), timed_out


def grade_functions(ctx: GradingContext) -> UnitResults:
    units = ctx.checks.units
    by_name = ctx.checks.by_name
    graded: dict[int, TestResult] = {}
    report, flags, timed_out = {}, {}, False

    def grade_one(index: int) -> None:
        nonlocal timed_out
        task = units[index]
        result, extra, hung = grade_task(ctx, index, task, by_name, list(graded.values()))
        graded[index], report[index] = result, extra.probes
        if extra.forbidden:
            flags[task.name] = extra.forbidden
        timed_out |= hung

    # A unit that needs a stand-in (or builds on one that waits) is graded last: once a stand-in's code has
    # reached the kernel, nothing the kernel says reaches results (withheld.py), so no other unit pays for it.
    # Indices are the unit's place among all units (its probes' seeds), question units skipped.
    last: list[int] = []
    for index, task in ((i, u) for i, u in enumerate(units) if isinstance(u, FunctionUnit)):
        waits = any(units[i].name in task.builds_on for i in last)
        if waits or replaced(task, by_name, list(graded.values())):
            last.append(index)
        else:
            grade_one(index)
    for index in last:
        grade_one(index)
    order = sorted(graded)
    return UnitResults([graded[i] for i in order], {"probes": [p for i in order for p in report[i]],
                                                    **({"forbidden_calls": flags} if flags else {})}, timed_out)
