"""Hidden checks as data: the units' answers and probes, serialised for the autograder zip.

The builder writes them; only the grader (trusted side) reads them. Nothing here runs a check.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json

import attn_ref
from attn_ref.answers import ANSWERS

from . import lab, practice

VISIBILITY = {"practice": "after_due_date", "lab": "visible"}  # Gradescope test visibility


def _expected(answer):
    if answer.kind == "choice":
        return answer.correct
    value = ANSWERS[answer.name]
    return sorted(value.items()) if answer.kind == "int_dict" else value


def practice_checks() -> dict:
    questions = [
        {
            "name": q.name,
            "title": q.title,
            "answers": [{"name": a.name, "kind": a.kind, "points": a.points, "expected": _expected(a),
                         "letters": "".join(letter for letter, _ in a.choices)} for a in q.answers],
        }
        for q in practice.QUESTIONS
    ]
    written = [
        {"name": f"{q.name}_written", "question": q.name, "title": q.title, "prompt": q.written_prompt}
        for q in practice.QUESTIONS
        if q.written_prompt
    ]
    return {"kind": "practice", "assignment": "practice", "visibility": VISIBILITY["practice"], "questions": questions,
            "written": written}


def _optional_parameters(starter: str, function: str) -> set[str]:
    """Parameters with defaults in the starter's signature: the grader passes these by keyword."""
    for node in ast.walk(ast.parse(starter)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            with_defaults = node.args.args[len(node.args.args) - len(node.args.defaults):]
            return {a.arg for a in with_defaults}
    raise ValueError(f"starter has no function {function}")


def _cuda_variants(task) -> list[dict]:
    """On a GPU runner: the task's first probe again on CUDA in float32 (TF32 off), 1 point."""
    first = task.probes[0].to_json()
    return [dict(first, name=f"on CUDA, float32: {first['name']}", points=1, device="cuda", dtype="float32")]


def lab_checks(runner: str = "cpu") -> dict:
    tasks = []
    for t in lab.TASKS:
        optional = _optional_parameters(t.starter, t.function)
        probes = [p.to_json() for p in t.probes]
        if runner == "gpu" and t.cuda:
            probes += _cuda_variants(t)
        for probe in probes:
            probe["args"] = [[name, dict(spec, keyword=name in optional)] for name, spec in probe["args"]]
        tasks.append(
            {
                "name": t.name,
                "title": t.title,
                "function": t.function,
                "framework": t.framework,
                "reference": t.reference,
                "outputs": list(t.outputs),
                "forbidden": list(t.forbidden),
                "builds_on": list(t.builds_on),
                "substitute": t.substitute,
                "probes": probes,
            }
        )
    return {"kind": "lab", "assignment": "lab", "runner": runner, "visibility": VISIBILITY["lab"], "tasks": tasks}


def with_version(checks: dict) -> dict:
    """Stamp the checks with a content hash: the autograder's identity in seeds and results."""
    checks = copy.deepcopy(checks)
    body = json.dumps(checks, sort_keys=True) + attn_ref.__version__
    checks["version"] = hashlib.sha256(body.encode()).hexdigest()
    return checks


CHECKS = {"practice": lambda runner: practice_checks(), "lab": lab_checks}
