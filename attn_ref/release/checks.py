"""Hidden checks as data (checks.json, defined in attn_ref/grade/checks_json.py): an assignment's answers and
probes, serialised for its autograder. The builder writes them; only the grader reads them."""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import re

from ..grade.checks_json import CHECKS_FORMAT
from .course import Assignment
from .units import Question, Task


def _expected(answer):
    if answer.kind == "int_dict":
        return sorted(answer.expected.items())
    return answer.expected


def _starter(t: Task) -> str:
    """The task's cell as students get it (its solution replaced by ...), the baseline of similarity."""
    return re.sub(r"( *)# BEGIN SOLUTION\n.*?# END SOLUTION", lambda m: m.group(1) + "...", t.starter, flags=re.S)


def _question(q: Question) -> dict:
    unit = {"kind": "question", "name": q.name, "title": q.title, "starter": "\n".join(f"{a.name} = ..." for a in q.answers),
            "answers": [{"name": a.name, "kind": a.kind, "points": a.points, "expected": _expected(a), "letters": a.letters,
                         **({"mistakes": [[wrong, says] for wrong, says in a.mistakes]} if a.mistakes else {})}
                        for a in q.answers]}
    if q.parameters:  # every variant's key, computed here with the reference: the grader runs no instructor code
        unit["variants"] = {"parameters": [[p.name, list(p.values)] for p in q.parameters], "defaults": q.defaults,
                            "expected": [[_expected(a) for a in q.answers_for(values)] for values in q.variants()]}
    return unit


def _optional_parameters(starter: str, function: str) -> set[str]:
    """Parameters with defaults in the starter's signature: the grader passes these by keyword."""
    for node in ast.walk(ast.parse(starter)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            with_defaults = node.args.args[len(node.args.args) - len(node.args.defaults):]
            return {a.arg for a in with_defaults}
    raise ValueError(f"the starter (solution.py) defines no function {function}")


def _cuda_variants(task: Task) -> list[dict]:
    """On a GPU runner: the task's first probe again on CUDA in float32 (TF32 off), 1 point."""
    first = task.probes[0].to_json()
    return [dict(first, name=f"on CUDA, float32: {first['name']}", points=1, device="cuda", dtype="float32")]


def _task(t: Task, runner: str, stand_ins: dict[str, str]) -> dict:
    optional = _optional_parameters(t.starter, t.function)
    probes = [p.to_json() for p in t.probes]
    if runner == "gpu" and t.cuda:
        probes += _cuda_variants(t)
    for probe in probes:
        probe["args"] = [[name, dict(spec, keyword=name in optional)] for name, spec in probe["args"]]
    return {"kind": "function", "name": t.name, "title": t.title, "function": t.function, "framework": t.framework, "reference": t.reference,
            "outputs": list(t.outputs), "forbidden": list(t.forbidden), "builds_on": list(t.builds_on),
            "substitute": stand_ins.get(t.name, ""), "starter": _starter(t), "probes": probes,
            "mistakes": [{"says": m.says, "source": m.source} for m in t.mutants]}


def checks(assignment: Assignment, runner: str = "cpu") -> dict:
    """checks.json of one assignment, without its version (``stamp`` adds it)."""
    needed = {name for t in assignment.tasks for name in t.builds_on}
    stand_ins = {t.name: t.substitute for t in assignment.tasks if t.name in needed}
    missing = sorted(name for name in needed if not stand_ins.get(name))
    if missing:
        raise ValueError(f"{assignment.name}: tasks {', '.join(missing)} are built on but have no substitute.py")
    units = [_question(u) if isinstance(u, Question) else _task(u, runner, stand_ins) for u in assignment.units]
    written = [{"name": f"{q.name}_written", "question": q.name, "title": q.title, "prompt": q.written_prompt,
                "points": q.written_points}
               for q in assignment.questions if q.written_prompt]
    return {
        "format": CHECKS_FORMAT,
        "assignment": assignment.name,
        "title": assignment.title,
        "runner": runner,
        "visibility": assignment.layout.visibility,
        "units": units,
        "written": written,
        "references": {module: (f"references/{file.name}" if file else None) for module, file in assignment.references},
        "helpers": "\n\n".join([assignment.setup, *(t.starter for t in assignment.tasks)]),
        **({"variant_key": _variant_key(assignment)} if any(q.parameters for q in assignment.questions) else {}),
    }


def _variant_key(assignment: Assignment) -> str:
    if not assignment.layout.variant_key:
        raise ValueError(f"{assignment.name}: questions with parameters need variant_key in assignment.py (one per "
                         "course and term: it decides which student gets which numbers)")
    return assignment.layout.variant_key


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def stamp(checks_data: dict, files: dict[str, bytes]) -> dict:
    """The checks with their identities: ``version`` covers everything that decides a score (the checks,
    the grader and reference sources, the pins, the scripts: every other file of the zip); ``seed_key``
    only the probes, so a grader edit alone does not re-seed every submission."""
    checks_data = copy.deepcopy(checks_data)
    body = json.dumps(checks_data, sort_keys=True).encode()
    probes = json.dumps([u.get("probes", u.get("answers")) for u in checks_data["units"]], sort_keys=True).encode()
    checks_data["seed_key"] = digest(probes)
    checks_data["version"] = digest(body, *(name.encode() + b"\0" + files[name] for name in sorted(files)))
    return checks_data
