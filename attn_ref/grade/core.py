"""grade(): one submission against one autograder, written as Gradescope's results.json."""

from __future__ import annotations

import json
import os
import platform
import secrets
import tempfile
import time
import traceback
import warnings
import zipfile
from pathlib import Path

import nbformat
import numpy as np

import attn_ref

from . import scoring, static, submission
from .inputs import Arg, generate, reference_outputs, seed_for
from .kernel import KernelStartError
from .sandbox import Sandbox, become_subreaper
from .session import BudgetExhausted, NotebookSession, runnable_cells

CHECKS_FILE = "checks.json"
BUDGET = 480.0  # everything for one submission: below Gradescope's default 10 minutes
NOTEBOOK_TIMEOUT = 180.0  # running the notebook's cells, all together
CELL_TIMEOUT = 120.0  # one notebook cell
CALL_TIMEOUT = 30.0  # one call of a student function
# What the tripwire in the kernel watches for, by the contract's name of each forbidden thing.
TRIPWIRES = {
    "torch.nn.functional.scaled_dot_product_attention": "scaled_dot_product_attention",
    "torch.nn.MultiheadAttention": "multi_head_attention_forward",
}
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
        "output": output,
        "visibility": visibility,
    }


def failed_results(checks: dict, reason: str) -> dict:
    """Score 0 everywhere, with the reason, for a submission that could not be run."""
    tests = [
        {"name": f"{u['name']}: {u['title']}", "score": 0.0, "max_score": _max_points(u, False),
         "output": f"Not graded: {reason}", "visibility": checks["visibility"]}
        for u in units(checks)
    ]
    return {"score": 0.0, "output": f"Your submission could not be graded: {reason}", "tests": tests,
            "extra_data": {"status": f"error: {reason}"}}


def _call_folder(exchange: Path, label: str, sandbox: Sandbox) -> Path:
    """A fresh folder for one exchange; its name is unguessable, so nothing can be planted in advance."""
    folder = exchange / f"{label}-{secrets.token_hex(8)}"
    folder.mkdir()
    sandbox.grant(folder)
    return folder


def _grade_practice(checks, session, exchange, sandbox, limits, banned) -> tuple[list, dict]:
    names = [a["name"] for q in checks["questions"] for a in q["answers"]]
    folder = _call_folder(exchange, "values", sandbox)
    try:
        values, outcome = session.read_json("read_values", folder / "values.json", names, timeout=limits["call"])
        problem = "" if values is not None else f"could not read your answers ({outcome.error or outcome.status})"
    except BudgetExhausted:
        values, problem = None, "not graded: the time budget for this submission ran out"
    tests = []
    for q in checks["questions"]:
        lines = []
        for a in q["answers"]:
            if banned or problem:
                lines.append((False, a["name"], a["points"], REFERENCE_MESSAGE if banned else problem))
                continue
            observed = values.get(a["name"], {"t": "missing"})
            try:
                ok, message = scoring.check_answer(a["kind"], a["expected"], observed)
            except (KeyError, TypeError, ValueError, AttributeError):  # a reply of the wrong shape
                ok, message = False, "the answer could not be read"
            lines.append((ok, a["name"], a["points"], message))
        tests.append(_entry(q, lines, checks["visibility"]))
    return tests, {}


def _write_call(folder: Path, task: dict, probe: dict, args: list[Arg]) -> Path:
    spec_args = []
    for i, a in enumerate(args):
        entry = {"name": a.name, "kind": a.kind, "keyword": a.keyword}
        if a.kind == "array":
            entry.update(file=f"arg{i}.npy", dtype=str(a.data.dtype), device=probe["device"])
            np.save(folder / entry["file"], a.data, allow_pickle=False)
        elif a.kind == "device":
            entry["device"] = a.data
        else:
            entry["value"] = a.data
        spec_args.append(entry)
    spec = {
        "framework": task["framework"],
        "args": spec_args,
        "return_inputs": "inputs_unchanged" in probe["checks"],
        "count_projections": probe["options"].get("count_projections", []),
        "tripwire": [TRIPWIRES[name] for name in task["forbidden"] if name in TRIPWIRES],
    }
    (folder / "spec.json").write_text(json.dumps(spec))
    return folder / "spec.json"


def _run_probe(session, exchange, sandbox, limits, task, probe, args, reference, stats) -> tuple[bool, str, list]:
    """One call of the student's function, then the trusted comparison; (passed, message, forbidden)."""
    folder = _call_folder(exchange, task["name"], sandbox)
    spec = _write_call(folder, task, probe, args)
    outcome = session.call("call", task["function"], str(spec), str(folder), timeout=limits["call"])
    meta_path = folder / "meta.json"
    if outcome.status in ("timeout", "dead") or not meta_path.exists():
        why = {"timeout": f"the call did not finish ({outcome.error})", "dead": "the call crashed the kernel"}
        return False, why.get(outcome.status, outcome.error or "no result came back"), []
    try:
        meta = json.loads(scoring.read_reply(meta_path))
        assert isinstance(meta, dict)
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError, OSError, AssertionError):
        return False, "the call's reply was unreadable", []
    forbidden = [name for name in meta.get("forbidden_called", []) if isinstance(name, str)]
    try:
        ok, message = scoring.check_probe(task, probe, args, reference, scoring.Observation(meta, folder), stats)
    except (KeyError, TypeError, ValueError, OSError) as err:  # a reply of the wrong shape: a wrong answer
        ok, message = False, f"the call's reply was malformed ({type(err).__name__})"
    return ok, message, forbidden


def _grade_lab(checks, session, exchange, sandbox, limits, code, seed, env, banned) -> tuple[list, dict]:
    tests, flags, report = [], {}, []
    cuda = bool(env.get("cuda"))
    for t_index, task in enumerate(checks["tasks"]):
        static_hits = static.forbidden_uses(code, task["function"], task["forbidden"])
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
            stats = {}
            try:
                ok, message, forbidden = _run_probe(session, exchange, sandbox, limits, task, probe, args, reference, stats)
            except BudgetExhausted:
                ok, message, forbidden = False, "not graded: the time budget for this submission ran out", []
            report.append({"task": task["name"], "probe": probe["name"], "device": probe["device"], "dtype": probe["dtype"],
                           "passed": ok, "max_error": stats.get("max_error")})
            tripped.update(forbidden)
            hung = message.startswith("the call did not finish")  # spare the budget for the other tasks
            lines.append((ok, probe["name"], probe["points"], message))
        if tripped:  # the tripwire saw a forbidden call, however it was reached: the task scores 0
            names = sorted(tripped)
            lines = [(False, label, points, f"called {', '.join(names)}, which this task does not allow") for _, label, points, _ in lines]
        if static_hits or tripped:
            flags[task["name"]] = sorted(set(static_hits) | tripped)
        tests.append(_entry(task, lines, checks["visibility"], cuda))
    return tests, {"probes": report, **({"forbidden_calls": flags} if flags else {})}


def _grade_notebook(nb, filename: str, checks: dict, sandbox: Sandbox, limits: dict, deadline: float) -> dict:
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    seed = seed_for(code, checks["version"])
    banned = static.uses_grader_reference(code)
    with tempfile.TemporaryDirectory(prefix="attn-ref-grade-") as tmp:
        tmp = Path(tmp)
        tmp.chmod(0o711)  # the kernel's user may pass through, not list
        workdir, exchange = tmp / "run", tmp / "exchange"
        workdir.mkdir()
        exchange.mkdir(mode=0o711)
        nbformat.write(nb, str(workdir / filename))  # the run folder holds only the notebook
        session = None
        try:
            session = NotebookSession(runnable_cells(nb), workdir, tmp, sandbox, cell_timeout=limits["cell"],
                                      notebook_timeout=limits["notebook"], deadline=deadline)
            env_folder = _call_folder(exchange, "environment", sandbox)
            try:
                env, _ = session.read_json("environment", env_folder / "environment.json", timeout=limits["call"])
            except BudgetExhausted:
                env = None
            env = env or {}
            if checks["kind"] == "practice":
                tests, flags = _grade_practice(checks, session, exchange, sandbox, limits, banned)
            else:
                tests, flags = _grade_lab(checks, session, exchange, sandbox, limits, code, seed, env, banned)
        finally:
            ended = session.shutdown() if session is not None else 0
    notes = [f"Graded by attn-ref {attn_ref.__version__} (autograder {checks['version'][:12]})."]
    notes.append("Public checks look at types and shapes; these hidden checks compare values.")
    if banned:
        notes.append(REFERENCE_MESSAGE + ".")
    if session.errors:
        notes.append(f"{len(session.errors)} cell(s) raised errors while your notebook ran, for example: {session.errors[0]}")
    messages = [t["output"] for t in tests] + session.errors
    timed_out = any("time budget" in m or "did not finish" in m or "stopped after" in m or "ran out of time" in m
                    for m in messages)
    return {
        "score": round(sum(t["score"] for t in tests), 6),
        "output": "\n".join(notes),
        "tests": tests,
        "extra_data": {"status": "timeout" if timed_out else "ok", "seed": seed, "kernel": env, "cell_errors": session.errors[:20],
                       "kernel_restarts": session.restarts, "processes_ended": ended,
                       "integrity_flags": static.integrity_flags(code), **flags},
    }


def write_atomically(path: Path, data: bytes) -> None:
    """Readers see the old file or the new one, never half of one (a killed run leaves only a .part)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".part")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _write_atomic(path: Path, data: dict) -> None:
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False).encode())


def results_name(submission_path: str | Path) -> str:
    path = Path(submission_path)
    return (path.stem if path.is_file() else path.name) + ".json"


def grade(submission_path, autograder, out_dir=None, results_path=None, *, budget: float = BUDGET,
          cell_timeout: float = CELL_TIMEOUT, call_timeout: float = CALL_TIMEOUT,
          notebook_timeout: float = NOTEBOOK_TIMEOUT, sandbox: Sandbox | None = None, write: bool = True) -> dict:
    """Grade one submission; write results to ``results_path`` or ``out_dir/results/<name>.json``.

    Always writes results, also when the submission is unreadable, the kernel cannot start or the
    budget runs out; only an unusable autograder raises (AutograderError), before anything runs.
    """
    checks = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    if sandbox is None:
        sandbox = Sandbox.configured(None if isinstance(autograder, dict) else autograder)
    if checks.get("runner") == "gpu":
        sandbox.memory_bytes = None  # CUDA reserves far more address space than it uses
    start = time.monotonic()
    limits = {"cell": cell_timeout, "call": call_timeout, "notebook": notebook_timeout}
    become_subreaper()
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nb, filename = submission.load(submission_path)
            submission.check_assignment(nb, checks["assignment"])
            results = _grade_notebook(nb, filename, checks, sandbox, limits, start + budget)
    except submission.SubmissionError as err:
        results = failed_results(checks, str(err))
    except KernelStartError as err:
        results = failed_results(checks, str(err))
    except Exception as err:  # a grader bug must still leave a results file and a reason
        traceback.print_exc()
        results = failed_results(checks, f"internal grader error ({type(err).__name__}: {err}); please tell your TA")
    results["execution_time"] = round(time.monotonic() - start, 2)
    results["extra_data"].update(
        assignment=checks["assignment"],
        autograder_version=checks["version"],
        attn_ref_version=attn_ref.__version__,
        grader={"python": platform.python_version(), "numpy": np.__version__, "uid": os.geteuid(),
                "kernel_user": sandbox.user, "kernel_python": sandbox.python},
        warnings=[str(w.message) for w in caught] + sandbox.warnings,
    )
    if write:
        if results_path is None:
            results_path = Path(out_dir or ".") / "results" / results_name(submission_path)
        _write_atomic(Path(results_path), results)
    return results
