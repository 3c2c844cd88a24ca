"""Hidden checks as data: an assignment's answers and probes, typed as checks.json's own ``Checks``
(attn_ref/grade/checks_json.py, the one schema) and written with its ``to_json`` for the autograder. The
builder makes them; only the grader reads them."""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np

from ..grade.checks_json import Arg, Checks, FunctionUnit, InvalidChecks, Mistake, Probe, QuestionUnit, WrittenPart, read_checks
from ..grade.scoring.comparators import CHECKS as COMPARATORS
from ..grade.scoring.inputs import GENERATORS, generate, probe_rng, reference_outputs
from .course import Assignment, CourseError
from .units import Question, Task


def blank_starter(t: Task) -> str:
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
                        stand_ins.get(t.name, ""), probes, blank_starter(t), tuple(Mistake(m.says, m.source) for m in t.mutants))


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


def read_back(assignment: Assignment) -> None:
    """The hidden checks read back as the grader will read them, with its registries of input generators and
    comparators, before anything is written: what the reader refuses (a negative score, an unknown comparator,
    a shape too large, two units of one name) stops the build here, naming the file that says it, not when
    `attn-ref check` opens the staged zip."""
    data = replace(checks(assignment), version="-", seed_key="-").to_json()  # stamped when the zip is made
    for i, unit in enumerate(data["units"]):
        try:  # as the zip carries it
            data["units"][i] = json.loads(json.dumps(unit, allow_nan=False))
        except (TypeError, ValueError) as err:
            raise CourseError(f"{_unit_file(assignment, unit)}: a value JSON cannot carry ({err}): write plain, finite Python "
                              "numbers and lists (float(...), int(...), .tolist())") from None
    for i, unit in enumerate(data["units"]):  # each unit read after those before it (builds_on names them)
        upto = data["units"][: i + 1]
        names = {u["name"] for u in upto}
        try:
            read_checks({**data, "units": upto, "written": [w for w in data["written"] if w["question"] in names]},
                        GENERATORS, COMPARATORS)
        except InvalidChecks as err:
            raise CourseError(f"{_unit_file(assignment, unit)}: {_unit_words(unit, i, str(err))}") from None
    try:
        typed = read_checks(data, GENERATORS, COMPARATORS)
    except InvalidChecks as err:
        raise CourseError(f"{assignment.folder / 'assignment.py'}: {err}") from None
    for index, unit in enumerate(typed.units):
        if isinstance(unit, FunctionUnit):
            _reference_answers(assignment, index, unit)


def _reference_answers(assignment: Assignment, index: int, unit: FunctionUnit) -> None:
    """The reference called on one draw of each probe's inputs, as the grader calls it: it must return the
    task's outputs, each an array or a number (one returning a list failed every grading with a TypeError
    deep in a comparator; one raising, with the grader's traceback)."""
    module_name, _, function = unit.reference.partition(":")
    file = dict(assignment.references).get(module_name)
    where = file or assignment.folder / unit.name / "task.py"
    if file is None:
        module = importlib.import_module(module_name)
    else:  # its bytes alone, as the grader runs references/<file> (course.py has proved they run)
        module = ModuleType(f"_reference_answers_{module_name}")
        exec(compile(file.read_bytes(), str(file), "exec"), module.__dict__)  # noqa: S102 - the instructor's reference
    reference = getattr(module, function)
    for p_index, probe in enumerate(unit.probes):
        try:
            outputs = reference_outputs(reference, generate(probe, probe_rng(0, index, p_index)))
        except Exception as err:  # noqa: BLE001 - whatever it raises, said with the probe
            raise CourseError(f"{where}: the reference {unit.reference} raised {type(err).__name__}: {err}, on the inputs of "
                              f"{unit.name}'s probe {probe.name!r}") from None
        kinds = [type(out).__name__ for out in outputs if not isinstance(out, (np.ndarray, np.generic, int, float, bool))]
        if len(outputs) != len(unit.outputs) or kinds:
            raise CourseError(f"{where}: the reference {unit.reference} returned {len(outputs)} value(s)"
                              f"{' (' + ', '.join(kinds) + ')' if kinds else ''} on the inputs of {unit.name}'s probe "
                              f"{probe.name!r}; the task has outputs={unit.outputs!r}: return one NumPy array or number "
                              "for each (a tuple for more than one)")


def _unit_file(assignment: Assignment, unit: dict) -> Path:
    return assignment.folder / unit["name"] / ("question.py" if unit["kind"] == "question" else "task.py")


def _unit_words(unit: dict, index: int, problem: str) -> str:
    """The reader's field path ("units[0].probes[1].points: ...") said of the unit's own probe or answer."""
    problem = re.sub(rf"^units(\[{index}\]|\.{re.escape(unit['name'])})(\.|: )", "", problem)
    field = re.match(r"(probes|answers)\[(\d+)\](.*)", problem, flags=re.S)
    if field is None:
        return problem
    kind, item, rest = field.groups()
    return f"{kind[:-1]} {unit[kind][int(item)]['name']!r}{rest}"


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
