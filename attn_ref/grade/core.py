"""grade(): one submission against one autograder, written as Gradescope's results.json.

The flow is one way: the submission is read and run in its own confined kernel (in a grading process
watched by a supervisor), the kernel hands back plain data, and scoring happens here with NumPy and
attn_ref. Only the supervisor's process writes results.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import tempfile
import time
import traceback
import warnings
import zipfile
from pathlib import Path

import nbformat
import numpy as np

import attn_ref

from ..protocol import MalformedReply, Status, cap, parse_call_reply, parse_values
from . import scoring, static, submission
from .inputs import Arg, generate, reference_outputs, seed_for
from .kernel import KernelStartError
from .safeio import UnsafeReply, write_new
from .sandbox import Jail, SandboxError, SandboxPlan, resolve
from .session import BudgetExhausted, NotebookSession, runnable_cells
from .watchdog import DISK_TRIP_FILE, Job, Supervisor

CHECKS_FILE = "checks.json"
BUDGET = 480.0  # everything for one submission: below Gradescope's default 10 minutes
NOTEBOOK_TIMEOUT = 180.0  # running the notebook's cells, all together
CELL_TIMEOUT = 120.0  # one notebook cell
CALL_TIMEOUT = 30.0  # one call of a student function
MAX_CODE = 1 << 20  # the code cells together (not the notebook: honest notebooks embed plots)
MAX_OUTPUT_TEXT = 8000  # one test's output in results.json
REFERENCE_MESSAGE = "the notebook uses attn_ref, the grader's reference; auto-graded answers score 0"


class AutograderError(Exception):
    """The --autograder argument is not a usable autograder; stops before grading."""


def load_autograder(path: str | Path) -> dict:
    path = Path(path)
    try:
        if path.is_dir():
            text = (path / CHECKS_FILE).read_text()
        else:
            with zipfile.ZipFile(path) as archive:
                text = archive.read(CHECKS_FILE).decode()
        checks = json.loads(text)
    except FileNotFoundError:
        raise AutograderError(f"{path}: no such autograder (expected a zip made by `attn-ref build`)") from None
    except (zipfile.BadZipFile, IsADirectoryError):
        raise AutograderError(f"{path} is not a zip file; expected autograder/<name>-autograder.zip") from None
    except KeyError:
        raise AutograderError(f"{path} has no {CHECKS_FILE}: it was not made by `attn-ref build`") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise AutograderError(f"{path}: {CHECKS_FILE} is damaged") from None
    if checks.get("kind") not in ("practice", "lab"):
        raise AutograderError(f"{path}: unknown assignment kind {checks.get('kind')!r}")
    return checks


def units(checks: dict) -> list[dict]:
    """The graded units of an autograder: practice questions or lab tasks."""
    return checks["questions"] if checks["kind"] == "practice" else checks["tasks"]


def _max_points(unit: dict, cuda: bool) -> float:
    if "answers" in unit:
        return sum(a["points"] for a in unit["answers"])
    return sum(p["points"] for p in unit["probes"] if cuda or p["device"] != "cuda")


def _entry(unit: dict, lines: list[tuple[bool, str, float, str]], visibility: str, cuda: bool = False) -> dict:
    """One Gradescope test entry; lines are (passed, label, points, message)."""
    output = "\n".join(
        f"{'✓' if ok else '✗'} {label} ({points if ok else 0:g}/{points:g})" + ("" if ok or not msg else f": {msg}")
        for ok, label, points, msg in lines
    )
    return {
        "name": f"{unit['name']}: {unit['title']}",
        "score": round(sum(points for ok, _, points, _ in lines if ok), 6),
        "max_score": _max_points(unit, cuda),
        "output": cap(output, MAX_OUTPUT_TEXT),
        "visibility": visibility,
    }


def failed_results(checks: dict, reason: str, status: str | None = None) -> dict:
    """Score 0 everywhere, with the reason, for a submission that could not be run."""
    reason = cap(reason, 1000)
    tests = [
        {"name": f"{u['name']}: {u['title']}", "score": 0.0, "max_score": _max_points(u, False),
         "output": f"Not graded: {reason}", "visibility": checks["visibility"]}
        for u in units(checks)
    ]
    return {"score": 0.0, "output": f"Your submission could not be graded: {reason}", "tests": tests,
            "extra_data": {"status": status or f"error: {reason}"}}


# ---- practice --------------------------------------------------------------------------------------

def _grade_practice(checks, session, limits, banned) -> tuple[list, dict]:
    names = [a["name"] for q in checks["questions"] for a in q["answers"]]
    problem, values = "", {}
    try:
        values, outcome = session.request("read_values", lambda data: parse_values(data, names), names,
                                          timeout=limits["call"], label="values")
        if values is None:
            problem = f"could not read your answers ({outcome.error or outcome.status.value})"
    except BudgetExhausted:
        problem = "not graded: the time budget for this submission ran out"
    tests = []
    for q in checks["questions"]:
        lines = []
        for a in q["answers"]:
            if banned or problem:
                lines.append((False, a["name"], a["points"], REFERENCE_MESSAGE if banned else problem))
                continue
            ok, message = scoring.check_answer(a["kind"], a["expected"], values[a["name"]], a.get("letters", ""))
            lines.append((ok, a["name"], a["points"], message))
        tests.append(_entry(q, lines, checks["visibility"]))
    return tests, {}


# ---- lab ---------------------------------------------------------------------------------------------

def _call_files(task: dict, probe: dict, args: list[Arg], substitutes: dict) -> dict[str, bytes]:
    """The call (protocol) and its input arrays, as the files of one exchange's inbox."""
    files, spec_args = {}, []
    for i, a in enumerate(args):
        entry = {"name": a.name, "kind": a.kind, "keyword": a.keyword}
        if a.kind == "array":
            name = f"arg{i}.npy"
            buffer = _npy(a.data)
            files[name] = buffer
            entry.update(file=name, dtype=str(a.data.dtype), device=probe["device"])
        elif a.kind == "device":
            entry["device"] = a.data
        else:
            entry["value"] = a.data
        spec_args.append(entry)
    spec = {
        "protocol": 1,
        "function": task["function"],
        "framework": task["framework"],
        "args": spec_args,
        "return_inputs": "inputs_unchanged" in probe["checks"],
        "count_projections": probe["options"].get("count_projections", []),
        "tripwire": bool(task["forbidden"]),
        "substitutes": substitutes,
    }
    files["call.json"] = json.dumps(spec).encode()
    return files


def _npy(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _run_probe(session, limits, task, probe, args, reference, substitutes, stats) -> tuple[bool, str, tuple, Status]:
    """One call of the student's function, then the trusted comparison; (passed, message, forbidden, status)."""
    exchange = session.exchange(task["name"], _call_files(task, probe, args, substitutes))
    outcome = session.call("call", task["function"], str(exchange.inbox), str(exchange.outbox), timeout=limits["call"])
    if outcome.status is Status.TIMEOUT:
        return False, f"the call did not finish ({outcome.error})", (), outcome.status
    if outcome.status is Status.DEAD:
        return False, "the call crashed the kernel", (), outcome.status
    try:
        reply = parse_call_reply(session.reply(exchange))
    except FileNotFoundError:
        return False, "no result came back from the call", (), Status.MALFORMED
    except (UnsafeReply, MalformedReply, OSError) as err:
        return False, f"the call's reply was unreadable ({cap(str(err), 120)})", (), Status.MALFORMED
    obs = scoring.Observation(reply, exchange.outbox, session.jail.owner)
    ok, message = scoring.check_probe(task, probe, args, reference, obs, stats)
    return ok, message, reply.forbidden_called, Status.OK


def _substitutes(task: dict, by_name: dict) -> dict[str, str]:
    """{function: source} of the earlier tasks this one builds on, bound while its probes run."""
    return {by_name[name]["function"]: by_name[name]["substitute"] for name in task.get("builds_on", [])
            if by_name.get(name, {}).get("substitute")}


def _grade_lab(checks, session, limits, analysis, seed, env, banned) -> tuple[list, dict, bool]:
    tests, flags, report = [], {}, []
    cuda = bool(env.get("cuda"))
    timed_out = False
    by_name = {t["name"]: t for t in checks["tasks"]}
    for t_index, task in enumerate(checks["tasks"]):
        static_hits = analysis.forbidden.get(task["name"], [])
        substitutes = _substitutes(task, by_name)
        lines, tripped, hung = [], set(), False
        for p_index, probe in enumerate(task["probes"]):
            if probe["device"] == "cuda" and not cuda:
                continue  # no GPU on this runner: the line is left out of the score and the maximum
            if banned or static_hits or hung:
                why = REFERENCE_MESSAGE if banned else f"uses {', '.join(static_hits)}, which this task does not allow"
                why = "not run: an earlier probe of this task did not finish" if hung else why
                lines.append((False, probe["name"], probe["points"], why))
                continue
            rng = np.random.default_rng([seed, t_index, p_index])
            args = generate(probe, rng)
            reference = None if probe["device"] == "meta" else reference_outputs(task["reference"], args)
            stats: dict = {}
            try:
                ok, message, forbidden, status = _run_probe(session, limits, task, probe, args, reference, substitutes, stats)
            except BudgetExhausted:
                ok, message, forbidden, status = False, "not graded: the time budget for this submission ran out", (), Status.BUDGET
            report.append({"task": task["name"], "probe": probe["name"], "device": probe["device"], "dtype": probe["dtype"],
                           "passed": ok, "max_error": stats.get("max_error")})
            tripped.update(forbidden)
            hung = status in (Status.TIMEOUT, Status.BUDGET)  # spare the budget for the other tasks
            timed_out |= hung
            lines.append((ok, probe["name"], probe["points"], message))
        if tripped:  # the tripwire saw a forbidden call, however it was reached: the task scores 0
            names = sorted(tripped)
            lines = [(False, label, points, f"called {', '.join(names)}, which this task does not allow")
                     for _, label, points, _ in lines]
        if static_hits or tripped:
            flags[task["name"]] = sorted(set(static_hits) | tripped)
        entry = _entry(task, lines, checks["visibility"], cuda)
        lost = [name for name in task.get("builds_on", []) if _lost_points(tests, name)]
        if lost and substitutes:
            functions = ", ".join(f"{by_name[n]['function']} ({n})" for n in lost)
            entry["output"] += (f"\nNote: your {functions} lost points there; a correct one stood in for it while "
                                f"{task['name']} was graded, so those mistakes are charged once.")
        tests.append(entry)
    return tests, {"probes": report, **({"forbidden_calls": flags} if flags else {})}, timed_out


def _lost_points(tests: list[dict], unit: str) -> bool:
    return any(t["name"].split(":")[0] == unit and t["score"] < t["max_score"] for t in tests)


# ---- one notebook ------------------------------------------------------------------------------------

@contextlib.contextmanager
def _running(nb, filename: str, checks: dict, jail: Jail, limits: dict, deadline: float):
    """The notebook run once in its kernel, with its static analysis: (analysis, session, env, seed)."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    if sum(len(c) for c in code) > MAX_CODE:
        raise submission.SubmissionError(f"the notebook's code cells hold more than {MAX_CODE >> 20} MB of code; "
                                         "remove what you do not need")
    seed = seed_for(code, checks["version"])
    tasks = checks.get("tasks", [])
    by_name = {t["name"]: t for t in tasks}
    analysis = static.analyse(code, {t["name"]: (t["function"], t["forbidden"], [by_name[n]["function"] for n in t.get("builds_on", [])
                                                                               if by_name.get(n, {}).get("substitute")])
                                     for t in tasks})
    session = NotebookSession(runnable_cells(nb), (filename, nbformat.writes(nb).encode()), jail,
                              cell_timeout=limits["cell"], notebook_timeout=limits["notebook"], deadline=deadline)
    try:
        try:
            env = session.environment(limits["call"])
        except BudgetExhausted:
            env = {}
        yield analysis, session, env, seed
    finally:
        session.shutdown()


def grade_notebook(nb, filename: str, checks: dict, jail: Jail, limits: dict, deadline: float) -> dict:
    """Run and score one notebook inside ``jail`` (in the grading process)."""
    timed_out = False
    with _running(nb, filename, checks, jail, limits, deadline) as (analysis, session, env, seed):
        if checks["kind"] == "practice":
            tests, extra = _grade_practice(checks, session, limits, analysis.uses_reference)
        else:
            tests, extra, timed_out = _grade_lab(checks, session, limits, analysis, seed, env, analysis.uses_reference)
    disk_note = (jail.base / DISK_TRIP_FILE).read_text()[:200] if (jail.base / DISK_TRIP_FILE).exists() else ""
    notes = [f"Graded by attn-ref {attn_ref.__version__} (autograder {checks['version'][:12]})."]
    notes.append("Public checks look at types and shapes; these hidden checks compare values.")
    if analysis.uses_reference:
        notes.append(REFERENCE_MESSAGE + ".")
    if disk_note:
        notes.append(f"The kernel was stopped: {disk_note}.")
    if session.errors:
        notes.append(f"{len(session.errors)} cell(s) raised errors while your notebook ran, for example: {session.errors[0]}")
    timed_out |= session.timed_out
    return {
        "score": round(sum(t["score"] for t in tests), 6),
        "output": cap("\n".join(notes), 4000),
        "tests": tests,
        "extra_data": {"status": "timeout" if timed_out else "ok", "seed": seed, "kernel": env,
                       "cell_errors": [cap(e) for e in session.errors[:20]], "kernel_restarts": session.restarts,
                       "integrity_flags": analysis.flags[:50], **extra},
    }


def grade_under_seeds(submission_path, autograder, seeds: list[int], *, plan: SandboxPlan | None = None,
                      cell_timeout: float = CELL_TIMEOUT, call_timeout: float = CALL_TIMEOUT,
                      notebook_timeout: float = NOTEBOOK_TIMEOUT) -> dict[int, dict[str, dict]]:
    """{seed: {task: test entry}}: a lab notebook run once, its probes run once per seed (for proving that
    verdicts do not depend on the seed). Raises if the notebook could not be run."""
    checks = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    plan = plan or resolve(None if isinstance(autograder, dict) else autograder)
    limits = {"cell": cell_timeout, "call": call_timeout, "notebook": notebook_timeout}
    budget = 120.0 + 60.0 * len(seeds)

    def run(jail: Jail) -> dict:
        nb, filename = submission.load(submission_path)
        per_seed = {}
        with _running(nb, filename, checks, jail, limits, time.monotonic() + budget) as (analysis, session, env, _):
            for seed in seeds:
                tests, _, _ = _grade_lab(checks, session, limits, analysis, seed, env, analysis.uses_reference)
                per_seed[str(seed)] = {t["name"].split(":")[0]: t for t in tests}
        return {"per_seed": per_seed}

    done: list[dict] = []
    job = Job("seeds", run, lambda reason, status: {"error": reason}, budget)
    Supervisor(plan).run([job], lambda job, results: done.append(results))
    if "per_seed" not in done[0]:
        raise RuntimeError(f"the notebook could not be graded under seeds: {done[0].get('error')}")
    return {int(seed): tests for seed, tests in done[0]["per_seed"].items()}


def grade_in_jail(submission_path, checks: dict, jail: Jail, limits: dict, budget: float) -> dict:
    """Job.run: everything about one submission, in the grading process; always returns results."""
    start = time.monotonic()
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nb, filename = submission.load(submission_path)
            submission.check_assignment(nb, checks["assignment"])
            results = grade_notebook(nb, filename, checks, jail, limits, start + budget)
    except (submission.SubmissionError, KernelStartError) as err:
        results = failed_results(checks, str(err))
    except Exception as err:  # a grader bug must still leave a results file and a reason
        traceback.print_exc()
        results = failed_results(checks, f"internal grader error ({type(err).__name__}: {cap(str(err), 200)}); please tell your TA")
    results["execution_time"] = round(time.monotonic() - start, 2)
    results["extra_data"]["warnings"] = [cap(str(w.message)) for w in caught[:10]]
    return results


def _record(results: dict, checks: dict, plan: SandboxPlan) -> dict:
    """What every results file says about the grader, whatever happened to the submission."""
    extra = results.setdefault("extra_data", {})
    extra.update(
        assignment=checks["assignment"],
        autograder_version=checks["version"],
        attn_ref_version=attn_ref.__version__,
        sandbox=plan.describe(),
        grader={"python": platform.python_version(), "numpy": np.__version__, "uid": os.geteuid(),
                "kernel_python": plan.python},
    )
    extra["warnings"] = list(extra.get("warnings", [])) + list(plan.warnings)
    return results


def make_job(key: str, submission_path, checks: dict, plan: SandboxPlan, limits: dict, budget: float) -> Job:
    def failed(reason: str, status: str) -> dict:
        return _record(failed_results(checks, reason, status), checks, plan)

    def run(jail: Jail) -> dict:
        return _record(grade_in_jail(submission_path, checks, jail, limits, budget), checks, plan)

    return Job(key, run, failed, budget)


def write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Readers see the old file or the new one, never half of one (a killed run leaves only a .part).

    Private to its owner by default: results and gradebooks name students."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".part")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def write_results(path: Path, results: dict) -> None:
    write_atomically(path, json.dumps(results, indent=2, ensure_ascii=False).encode())


def results_name(submission_path: str | Path) -> str:
    path = Path(submission_path)
    return (path.stem if path.is_file() else path.name) + ".json"


def grade(submission_path, autograder, out_dir=None, results_path=None, *, budget: float = BUDGET,
          cell_timeout: float = CELL_TIMEOUT, call_timeout: float = CALL_TIMEOUT,
          notebook_timeout: float = NOTEBOOK_TIMEOUT, plan: SandboxPlan | None = None, write: bool = True) -> dict:
    """Grade one submission; write results to ``results_path`` or ``out_dir/results/<name>.json``.

    Always writes results, also when the submission is unreadable, the kernel cannot start, the grading
    hangs or the budget runs out; only an unusable autograder (AutograderError) or student environment
    (SandboxError) raises, before anything runs.
    """
    checks = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    if plan is None:
        plan = resolve(None if isinstance(autograder, dict) else autograder)
    if checks.get("runner") == "gpu":
        plan = plan.for_gpu()
    limits = {"cell": cell_timeout, "call": call_timeout, "notebook": notebook_timeout}
    done: list[dict] = []
    Supervisor(plan).run([make_job("submission", submission_path, checks, plan, limits, budget)],
                         lambda job, results: done.append(results))
    results = done[0]
    if write:
        if results_path is None:
            results_path = Path(out_dir or ".") / "results" / results_name(submission_path)
        write_results(Path(results_path), results)
    return results


__all__ = ["AutograderError", "SandboxError", "grade", "load_autograder", "write_new"]
