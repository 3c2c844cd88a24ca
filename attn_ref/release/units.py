"""One question is one unit: prompt, solution, public checks, hidden checks and points together.

Hidden checks are plain data (JSON-ready dicts); the grader owns the code that runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Answer:
    """An auto-graded variable the student assigns, checked with the contract's type rules."""

    name: str
    kind: str  # "int" | "float" | "bool" | "choice" | "int_dict"
    points: float = 1.0
    choices: tuple[tuple[str, str], ...] = ()  # (letter, option) for kind == "choice"
    correct: str | None = None  # the letter, for kind == "choice"
    low: float | None = None  # a plausible range, checked publicly (never the value)
    high: float | None = None

    def __post_init__(self):
        assert self.kind in {"int", "float", "bool", "choice", "int_dict"}, self.kind
        assert (self.kind == "choice") == bool(self.choices) == (self.correct is not None), self.name


@dataclass(frozen=True)
class Question:
    """A practice question: auto-graded variables, and optionally a written part graded by hand."""

    name: str
    source: str  # where in note 3.1 it comes from, e.g. "§11.4"
    title: str
    prompt: str  # Markdown, in the project's own words
    answers: tuple[Answer, ...]
    solution: str  # code assigning every answer variable, shown in the solution notebook
    written_prompt: str | None = None
    written_solution: str | None = None
    written_points: float = 1.0

    @property
    def points(self) -> float:
        return sum(a.points for a in self.answers)


@dataclass(frozen=True)
class Probe:
    """One line of partial credit: call the student's function on generated inputs, check the result.

    args: list of (name, spec) where spec is {"normal": shape, "scale": s} (float64 normal draws),
    {"mask": shape, "p": keep probability, "empty_rows": [..]} (bool, True = may attend),
    {"normal": shape, "common": c} (rows that share a component of length c along one random direction),
    or {"value": literal}. Arguments with "student_only": True are not passed to the
    reference. dtype/device: how float arrays reach the student ("float64"/"float32"; "cpu"/"cuda"/"meta").
    checks: names of the grader's comparators, all of which must pass.
    """

    name: str
    points: float
    args: tuple[tuple[str, dict], ...]
    checks: tuple[str, ...] = ("matches_reference",)
    dtype: str = "float64"
    device: str = "cpu"
    options: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "points": self.points,
            "args": [[n, s] for n, s in self.args],
            "checks": list(self.checks),
            "dtype": self.dtype,
            "device": self.device,
            "options": dict(self.options),
        }


@dataclass(frozen=True)
class Task:
    """A lab task: a function the student writes, checked by probes against attn_ref."""

    name: str
    function: str
    framework: str  # "numpy" | "torch"
    title: str
    prompt: str  # Markdown
    starter: str  # signature and docstring with `...` bodies marked for Otter (solution inside)
    example: str  # a short worked example the student can run
    public_checks: tuple[str, ...]
    probes: tuple[Probe, ...]
    reference: str  # the attn_ref function the probes compare against
    outputs: tuple[str, ...] = ("out",)  # names of the returned values, for messages
    forbidden: tuple[str, ...] = ()
    cuda: bool = False  # repeat the value probes on CUDA when the runner has it
    builds_on: tuple[str, ...] = ()  # earlier tasks whose functions this one calls (graded with correct ones)
    substitute: str = ""  # a minimal known-correct implementation, bound while later tasks are graded

    @property
    def points(self) -> float:
        return sum(p.points for p in self.probes)
