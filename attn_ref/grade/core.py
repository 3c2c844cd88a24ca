"""grade(): one submission against one autograder, written as Gradescope's results.json."""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import nbformat
import numpy as np

import attn_ref

from . import scoring, static, submission
from .inputs import Arg, generate, reference_outputs, seed_for
from .session import NotebookSession, runnable_cells

CHECKS_FILE = "checks.json"
CELL_TIMEOUT = 120.0  # one notebook cell
CALL_TIMEOUT = 30.0  # one call of a student function


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


def _units(checks: dict) -> list[dict]:
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
        for u in _units(checks)
    ]
    return {"score": 0.0, "output": f"Your submission could not be graded: {reason}", "tests": tests,
            "extra_data": {"status": f"error: {reason}"}}


def _grade_practice(checks: dict, session: NotebookSession, exchange: Path) -> tuple[list, dict]:
    names = [a["name"] for q in checks["questions"] for a in q["answers"]]
    values, outcome = session.read_json("read_values", exchange / "values.json", names, timeout=CALL_TIMEOUT)
    if values is None:
        values = {name: {"t": "missing"} for name in names}
    tests = []
    for q in checks["questions"]:
        lines = []
        for a in q["answers"]:
            ok, message = scoring.check_answer(a["kind"], a["expected"], values[a["name"]])
            lines.append((ok, a["name"], a["points"], message))
        tests.append(_entry(q, lines, checks["visibility"]))
    return tests, {}


def _write_call(folder: Path, task: dict, probe: dict, args: list[Arg]) -> Path:
    folder.mkdir(parents=True)
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
    }
    (folder / "spec.json").write_text(json.dumps(spec))
    return folder / "spec.json"


def _grade_lab(checks: dict, session: NotebookSession, exchange: Path, code: list[str], seed: int, env: dict):
    tests, flags = [], {}
    cuda = bool(env.get("cuda"))
    for t_index, task in enumerate(checks["tasks"]):
        banned = static.forbidden_uses(code, task["function"], task["forbidden"])
        lines = []
        if banned:
            flags[task["name"]] = banned
            for probe in task["probes"]:
                lines.append((False, probe["name"], probe["points"], f"uses {', '.join(banned)}, which this task does not allow"))
            tests.append(_entry(task, lines, checks["visibility"], cuda))
            continue
        for p_index, probe in enumerate(task["probes"]):
            if probe["device"] == "cuda" and not cuda:
                continue  # no GPU on this runner: the line is left out of the score and the maximum
            rng = np.random.default_rng([seed, t_index, p_index])
            args = generate(probe, rng)
            reference = None if probe["device"] == "meta" else reference_outputs(task["reference"], args)
            folder = exchange / f"{task['name']}-{p_index}"
            spec = _write_call(folder, task, probe, args)
            outcome = session.call("call", task["function"], str(spec), str(folder), timeout=CALL_TIMEOUT)
            meta_path = folder / "meta.json"
            if outcome.status in ("timeout", "dead") or not meta_path.exists():
                why = {"timeout": f"the call did not finish ({outcome.error})", "dead": "the call crashed the kernel"}
                lines.append((False, probe["name"], probe["points"], why.get(outcome.status, outcome.error or "no result")))
                continue
            observation = scoring.Observation(json.loads(meta_path.read_text()), folder)
            ok, message = scoring.check_probe(task, probe, args, reference, observation)
            lines.append((ok, probe["name"], probe["points"], message))
        tests.append(_entry(task, lines, checks["visibility"], cuda))
    return tests, {"forbidden_calls": flags} if flags else {}


def _grade_notebook(nb, filename: str, checks: dict, cell_timeout: float) -> dict:
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    seed = seed_for(code, checks["version"])
    with tempfile.TemporaryDirectory(prefix="attn-ref-grade-") as tmp:
        workdir, exchange = Path(tmp) / "run", Path(tmp) / "exchange"
        workdir.mkdir()
        exchange.mkdir()
        nbformat.write(nb, str(workdir / filename))  # otter.Notebook("<name>.ipynb") looks for it
        session = NotebookSession(runnable_cells(nb), workdir, cell_timeout)
        try:
            env, _ = session.read_json("environment", exchange / "environment.json", timeout=CALL_TIMEOUT)
            env = env or {}
            if checks["kind"] == "practice":
                tests, flags = _grade_practice(checks, session, exchange)
            else:
                tests, flags = _grade_lab(checks, session, exchange, code, seed, env)
        finally:
            session.shutdown()
    notes = [f"Graded by attn-ref {attn_ref.__version__} (autograder {checks['version'][:12]})."]
    notes.append("Public checks look at types and shapes; these hidden checks compare values.")
    if session.errors:
        notes.append(f"{len(session.errors)} cell(s) raised errors while your notebook ran, for example: {session.errors[0]}")
    return {
        "score": round(sum(t["score"] for t in tests), 6),
        "output": "\n".join(notes),
        "tests": tests,
        "extra_data": {"status": "ok", "seed": seed, "kernel": env, "cell_errors": session.errors[:20],
                       "kernel_restarts": session.restarts, **flags},
    }


def _write_atomic(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
    os.replace(tmp, path)


def results_name(submission_path: str | Path) -> str:
    path = Path(submission_path)
    return (path.stem if path.is_file() else path.name) + ".json"


def grade(submission_path, autograder, out_dir=None, results_path=None, cell_timeout: float = CELL_TIMEOUT) -> dict:
    """Grade one submission; write results to ``results_path`` or ``out_dir/results/<name>.json``."""
    checks = autograder if isinstance(autograder, dict) else load_autograder(autograder)
    start = time.monotonic()
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nb, filename = submission.load(submission_path)
            submission.check_assignment(nb, checks["assignment"])
    except submission.SubmissionError as err:
        results = failed_results(checks, str(err))
    else:
        results = _grade_notebook(nb, filename, checks, cell_timeout)
    results["execution_time"] = round(time.monotonic() - start, 2)
    results["extra_data"].update(
        assignment=checks["assignment"],
        autograder_version=checks["version"],
        attn_ref_version=attn_ref.__version__,
        grader={"python": platform.python_version(), "numpy": np.__version__},
        warnings=[str(w.message) for w in caught],
    )
    if results_path is None:
        results_path = Path(out_dir or ".") / "results" / results_name(submission_path)
    _write_atomic(Path(results_path), results)
    return results
