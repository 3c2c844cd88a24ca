"""What a unit of an assignment is: a question (answer variables) or a task (a function, probed).

A unit lives in a folder of its own (PrairieLearn's way): ``question.py`` or ``task.py`` declares it, and
the files beside it hold the rest (see docs/instructors.md, "Writing an assignment"). The loader (course.py) fills the
fields marked "from a file". ``Answer`` and ``Probe`` are checks.json's own (attn_ref/grade/checks_json.py),
so what an instructor writes is what the grader reads; the grader owns the code that runs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..grade.checks_json import MAX_VARIANTS, Answer, Probe, unit_name_problem
from ..portable.variants import combinations, parameters_for

__all__ = ["Answer", "Probe", "Parameter", "Question", "Task", "Mutant", "normal", "mask", "drawn", "value", "DEVICE",
           "F32", "META", "shown", "shown_tensor"]


def points_problem(points) -> str:
    """Why a probe or an answer cannot be worth ``points``, or "": a line worth 0 earns nothing and one worth
    less takes points from whoever passes it (the reader refuses below 0; the builder also refuses 0)."""
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not math.isfinite(points) or points <= 0:
        return f"points={points!r}; a line is worth a positive number of points (remove a line that should earn nothing)"
    return ""


def range_problem(answer: Answer) -> str:
    """Why an answer's public range (``low``, ``high``) gives the answer away, or "": students read the range in
    the public check's message, so a range that holds only values near the answer is the answer. A plausible
    range reaches at least half the answer's size from it on one side (1 from an answer of 0)."""
    if answer.kind not in ("int", "float") or answer.low is None or answer.high is None:
        return ""
    reach = abs(answer.expected) / 2 or 1
    if max(answer.expected - answer.low, answer.high - answer.expected) >= reach:
        return ""
    return (f"its public range [{answer.low}, {answer.high}] gives the answer away: students see the range when they "
            f"run the check, and every value in it is near the answer; give a plausible range (the order of magnitude, "
            f"reaching at least half the answer's size from it), or only low= or high=")


_EPS = {"float32": 2.0**-23, "float64": 2.0**-52}  # machine epsilon of each probe dtype


def tolerance_problem(probe: Probe) -> str:
    """Why a probe's own ``rtol``/``atol`` cannot be met by correct code, or "": a value that is not a number of
    0 or more, or both below what the probe's dtype holds (a float32 result differs from the float64 reference by
    its rounding alone, and a few operations take that to several eps), which would fail every correct solution
    and name a mistake it does not make."""
    given = {key: probe.options[key] for key in ("rtol", "atol") if key in probe.options}
    for key, number in given.items():
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not number >= 0:
            return f"{key}={number!r}; a tolerance is a number of 0 or more"
    eps = _EPS[probe.dtype]
    if len(given) == 2 and given["rtol"] + given["atol"] < 8 * eps:
        return (f"rtol={given['rtol']:g} and atol={given['atol']:g} are below what {probe.dtype} holds (its precision is "
                f"{eps:.1e}, and a few operations round by several times that): correct code fails them; allow at "
                f"least {8 * eps:.0e} together, or leave them out for the default")
    return ""


@dataclass(frozen=True)
class Parameter:
    """A number a question's variants vary: the variable the notebook defines for the student, the values
    allowed, and the note's own (the default variant: the solution notebook, a notebook with no identity)."""

    name: str
    values: tuple
    default: object

    def __post_init__(self):
        if not self.name.isidentifier() or not self.values or self.default not in self.values:
            raise ValueError(f"parameter {self.name!r}: a Python name, a tuple of values and a default among them")


@dataclass(frozen=True)
class Question:
    """A question: auto-graded variables, and optionally a written part graded by hand.

    Per-student variants: ``parameters`` and ``vary``, a function of the parameters (by name) that returns
    the answers for those values (``answers`` is ``vary`` at the defaults). Only int and float answers may
    vary; choices, yes/no answers and written parts are the same in every variant.
    """

    name: str
    title: str
    answers: tuple[Answer, ...]
    source: str = ""  # where in the course notes it comes from, e.g. "§11.4"
    written_points: float = 1.0
    prompt: str = ""  # from prompt.md
    solution: str = ""  # from solution.py: code assigning every answer variable
    written_prompt: str = ""  # from written.md, if the question has a written part
    written_solution: str = ""  # from written_solution.md
    parameters: tuple[Parameter, ...] = ()
    vary: Callable[..., tuple[Answer, ...]] | None = None

    def __post_init__(self):
        if problem := unit_name_problem(self.name):
            raise ValueError(f"Question name {self.name!r}: {problem}")
        if bool(self.parameters) != (self.vary is not None):
            raise ValueError(f"{self.name}: per-student variants need both parameters and vary")
        if self.parameters and len(self.variants()) > MAX_VARIANTS:
            raise ValueError(f"{self.name}: {len(self.variants())} combinations of parameters; at most {MAX_VARIANTS}")
        for answer in self.answers:
            if problem := points_problem(answer.points) or range_problem(answer):
                raise ValueError(f"answer {answer.name!r}: {problem}")

    @property
    def points(self) -> float:
        return sum(a.points for a in self.answers)

    @property
    def defaults(self) -> dict:
        return {p.name: p.default for p in self.parameters}

    @property
    def parameter_lists(self) -> list[tuple[str, list]]:
        """[(name, values), ...]: the parameters as attn_ref/portable/variants.py takes them."""
        return [(p.name, list(p.values)) for p in self.parameters]

    def numbers_of(self, key: str, identity: str) -> dict:
        """The parameter values one identity gets (the defaults without one)."""
        return parameters_for(key, identity, self.name, self.parameter_lists, self.defaults)

    def variants(self) -> list[dict]:
        """Every combination of the parameters' values, in the order attn_ref/portable/variants.py numbers them."""
        return combinations(self.parameter_lists)

    def answers_for(self, values: dict) -> tuple[Answer, ...]:
        """The answers of one variant, checked against the default's: the same names, kinds and points, and
        only int and float answers differing."""
        found = self.vary(**values)
        if [(a.name, a.kind, a.points) for a in found] != [(a.name, a.kind, a.points) for a in self.answers]:
            raise ValueError(f"{self.name}: vary({values}) gives other answers than the default's (names, kinds, points)")
        for a, default in zip(found, self.answers):
            if problem := range_problem(a):
                raise ValueError(f"answer {a.name!r}: {problem}")
            if a.kind not in ("int", "float") and a.expected != default.expected:
                raise ValueError(f"{self.name}: {a.name} is a {a.kind} answer and changes with the parameters; only "
                                 "int and float answers may vary")
        return found


@dataclass(frozen=True)
class Mutant:
    """A wrong implementation declared with its task: `attn-ref check` proves every probe fails one, and
    that each fails the probe its "# must fail:" line names; a stub ("# stub") must score 0."""

    label: str  # what is wrong, from the file's first line "# mutant: ..."
    source: str
    must_fail: str = ""  # a probe (name fragment) it must fail, from "# must fail: ..." (`attn-ref check` enforces it)
    path: str = ""  # its file, for messages
    stub: bool = False  # "# stub": code that does none of the task, which must score 0 (`attn-ref check`)
    says: str = ""  # "# says: ...": what a student whose outputs match it is told (default: the label)


@dataclass(frozen=True)
class Task:
    """A task: a function the student writes, checked by probes against a reference function."""

    name: str
    function: str
    framework: str  # "numpy" | "torch"
    title: str
    reference: str  # "module:function", resolved at build time and shipped in the autograder
    probes: tuple[Probe, ...]
    outputs: tuple[str, ...] = ("out",)  # names of the returned values, for messages
    forbidden: tuple[str, ...] = ()
    cuda: bool = False  # repeat the first probe on CUDA when the runner has it
    builds_on: tuple[str, ...] = ()  # earlier tasks whose functions this one calls (graded with stand-ins)
    prompt: str = ""  # from prompt.md
    starter: str = ""  # from solution.py: the function, its body between BEGIN/END SOLUTION markers
    example: str = ""  # from task.py's example(): a worked example, computed with the reference
    public_checks: tuple[str, ...] = ()  # from public_checks.py: otter exception-format tests
    substitute: str = ""  # from substitute.py: a minimal correct implementation, the stand-in for later tasks
    mutants: tuple[Mutant, ...] = ()  # from mutants/*.py

    def __post_init__(self):
        if problem := unit_name_problem(self.name):
            raise ValueError(f"Task name {self.name!r}: {problem}")
        for probe in self.probes:
            if problem := points_problem(probe.points) or tolerance_problem(probe):
                raise ValueError(f"probe {probe.name!r}: {problem}")

    @property
    def points(self) -> float:
        return sum(p.points for p in self.probes)


# ---- probe inputs, as data --------------------------------------------------------------------------

def normal(*shape: int, scale: float = 1.0, common: float | None = None) -> dict:
    """Standard normal draws times ``scale``; ``common``: every row shares a component of that length."""
    spec: dict = {"normal": list(shape), "scale": scale}
    if common is not None:
        spec["common"] = common
    return spec


def mask(*shape: int, p: float = 0.6, empty_rows: tuple[int, ...] = ()) -> dict:
    """A bool mask, True with probability ``p``; every row gets a True unless listed in ``empty_rows``."""
    spec: dict = {"mask": list(shape), "p": p}
    if empty_rows:
        spec["empty_rows"] = list(empty_rows)
    return spec


ALL = None  # drawn(distinct=ALL), the default: every drawn size differs from every other


def drawn(distinct: tuple[tuple[str, ...], ...] | None = ALL, **ranges: tuple[int, int]) -> dict:
    """A probe's options for sizes drawn per grading: ``drawn(B=(1, 3), T=(2, 9), d=(2, 8))``, inclusive ranges
    (the prompt's promises are the bounds), names used in the shapes (``normal("B", "T", "d")``). By default
    every size differs from every other: code that reads one dimension for another (T for d_k, B for T) or
    swaps two axes would pass under the seeds that happen to draw them equal, a verdict that depends on the
    seed; ``distinct`` names groups instead (``distinct=()``: sizes may coincide). Ranges that cannot give a
    group different sizes are refused where checks.json is read (checks_json._dims)."""
    groups = [tuple(ranges)] if distinct is ALL else [tuple(group) for group in distinct]
    options: dict = {"dims": {name: list(bounds) for name, bounds in ranges.items()}}
    if any(len(group) > 1 for group in groups):
        options["distinct"] = [list(group) for group in groups if len(group) > 1]
    return options


def value(v, student_only: bool = False) -> dict:
    """A literal argument (an int, a float, a bool)."""
    return {"value": v, "student_only": student_only}


DEVICE = ("device", {"device": True, "student_only": True})  # the probe's device, passed as `device=`
F32 = {"dtype": "float32"}
META = {"device": "meta", "checks": ("device_kept",)}  # tensors without data: where did the output land?


def shown(array) -> str:
    """An array as NumPy prints it in a worked example (four decimals, tiny values as 0); a torch task's
    example uses ``shown_tensor``."""
    import numpy as np

    return np.array2string(np.asarray(array), precision=4, suppress_small=True)


def shown_tensor(array, dtype: str | None = None) -> str:
    """An array as torch prints the tensor a student's code returns for it: ``tensor([...])``, four
    decimals. Floats become float32 (what ``torch.tensor([1.0])`` makes), so no ``dtype=`` suffix shows;
    ``dtype`` names another (``"int32"`` for ``.int()``, ``"float64"``)."""
    import numpy as np
    import torch

    tensor = torch.as_tensor(np.asarray(array))
    tensor = tensor.to(getattr(torch, dtype)) if dtype else tensor.float() if tensor.is_floating_point() else tensor
    torch.set_printoptions(precision=4, sci_mode=False)
    try:
        return repr(tensor)
    finally:
        torch.set_printoptions(profile="default")
