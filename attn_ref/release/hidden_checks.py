"""Hidden checks as data: an assignment's answers and probes, typed as checks.json's own ``Checks``
(attn_ref/grade/checks_json.py, the one schema) and written with its ``to_json`` for the autograder. The
builder makes them; only the grader reads them."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import replace

from ..grade.checks_json import Arg, Checks, FunctionUnit, Mistake, Probe, QuestionUnit, WrittenPart
from .course import Assignment
from .units import Question, Task


def _starter(t: Task) -> str:
    """The task's cell as students get it (its solution replaced by ...), the baseline of similarity."""
    return re.sub(r"( *)# BEGIN SOLUTION\n.*?# END SOLUTION", lambda m: m.group(1) + "...", t.starter, flags=re.S)


def _question(q: Question) -> QuestionUnit:
    starter = "\n".join(f"{a.name} = ..." for a in q.answers)
    if not q.parameters:
        return QuestionUnit(q.name, q.title, q.answers, starter)
    # every variant's key, computed here with the reference: the grader runs no instructor code
    return QuestionUnit(q.name, q.title, q.answers, starter, tuple((p.name, p.values) for p in q.parameters), q.defaults,
                        tuple(tuple(a.expected for a in q.answers_for(values)) for values in q.variants()))


def _optional_parameters(starter: str, function: str) -> set[str]:
    """Parameters with defaults in the starter's signature: the grader passes these by keyword."""
    for node in ast.walk(ast.parse(starter)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            with_defaults = node.args.args[len(node.args.args) - len(node.args.defaults):]
            return {a.arg for a in with_defaults}
    raise ValueError(f"the starter (solution.py) defines no function {function}")


def _on_cuda(first: Probe) -> Probe:
    """On a GPU runner: the task's first probe again on CUDA in float32 (TF32 off), 1 point."""
    return replace(first, name=f"on CUDA, float32: {first.name}", points=1, device="cuda", dtype="float32")


def _task(t: Task, runner: str, stand_ins: dict[str, str]) -> FunctionUnit:
    optional = _optional_parameters(t.starter, t.function)
    probes = t.probes + ((_on_cuda(t.probes[0]),) if runner == "gpu" and t.cuda else ())
    probes = tuple(replace(p, args=tuple(Arg(a.name, {**a.spec, "keyword": a.name in optional}) for a in p.args))
                   for p in probes)
    return FunctionUnit(t.name, t.title, t.function, t.framework, t.reference, t.outputs, t.forbidden, t.builds_on,
                        stand_ins.get(t.name, ""), probes, _starter(t), tuple(Mistake(m.says, m.source) for m in t.mutants))


def checks(assignment: Assignment, runner: str = "cpu") -> Checks:
    """The hidden checks of one assignment, without their version and seed key (``stamp`` adds them)."""
    needed = {name for t in assignment.tasks for name in t.builds_on}
    stand_ins = {t.name: t.substitute for t in assignment.tasks if t.name in needed}
    missing = sorted(name for name in needed if not stand_ins.get(name))
    if missing:
        raise ValueError(f"{assignment.name}: tasks {', '.join(missing)} are built on but have no substitute.py")
    units = tuple(_question(u) if isinstance(u, Question) else _task(u, runner, stand_ins) for u in assignment.units)
    written = tuple(WrittenPart(q.name, q.written_prompt, q.title, f"{q.name}_written", q.written_points)
                    for q in assignment.questions if q.written_prompt)
    references = {module: (f"references/{file.name}" if file else None) for module, file in assignment.references}
    helpers = "\n\n".join([assignment.setup, *(t.starter for t in assignment.tasks)])
    variant_key = _variant_key(assignment) if any(q.parameters for q in assignment.questions) else ""
    return Checks(assignment.name, units, written, assignment.title, runner, assignment.layout.visibility,
                  references=references, helpers=helpers, variant_key=variant_key)


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


def stamp(checks: Checks, files: dict[str, bytes]) -> Checks:
    """The checks with their identities: ``version`` covers everything that decides a score (the checks,
    the grader and reference sources, the pins, the scripts: every other file of the zip); ``seed_key``
    only the probes and answers, so a grader edit alone does not re-seed every submission."""
    data = replace(checks, version="", seed_key="").to_json()
    body = json.dumps(data, sort_keys=True).encode()
    probes = json.dumps([u.get("probes", u.get("answers")) for u in data["units"]], sort_keys=True).encode()
    return replace(checks, seed_key=digest(probes),
                   version=digest(body, *(name.encode() + b"\0" + files[name] for name in sorted(files))))
