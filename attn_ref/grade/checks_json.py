"""checks.json: the hidden checks as data, from the builder to the grader inside the autograder zip.

One schema at both ends: the builder (``attn_ref/release/hidden_checks.py``) makes these frozen dataclasses
(``Checks``, its ``QuestionUnit``s with their ``Answer``s or ``FunctionUnit``s with their ``Probe``s and each
probe's ``Arg``s, ``WrittenPart``s) and writes them with ``to_json``; the grader reads them back with
``read_checks`` (``Checks.from_json``), which checks every field as it takes it, so the first complaint names
the field. Nobody reads the raw dict. Plain mappings remain only for what is free-form (a generator's
parameters, a probe's options, the references). Standard library only.

**checks.json** (builder -> grader, inside the autograder zip; ``read_checks``)::

    {"format": 2, "assignment": "lab", "title": "...", "runner": "cpu" | "gpu", "visibility": "hidden" | "after_due_date" | "after_published" | "visible",
     "version": HEX, "seed_key": HEX,          # everything that decides a score / the probes alone
     "units": [UNIT, ...],                      # in the notebook's order; an assignment may mix kinds
     "written": [{"name", "question", "title", "prompt"}],
     "references": {"attn_ref.attention": null, "stats_ref": "references/stats_ref.py"},
     "helpers": SOURCE}                         # setup and solutions, which the mistakes' mutants call

    question UNIT = {"kind": "question", "name", "title", "starter", "answers": [{"name", "kind": "int" | "float" | "bool" | "choice" |
                      "int_dict", "points", "expected", "letters", "mistakes": [[value, description]] (optional)}],
                     "variants": {"parameters": [[name, [number, ...]]], "defaults": {name: number},   # (optional)
                                  "expected": [[EXPECTED per answer], ...]}}  # one per combination (attn_ref/portable/variants.py)
    with "variant_key": TEXT at the top level when a unit has variants (per course and term: which identity
    gets which variant).
    function UNIT = {"kind": "function", "name", "title", "starter", "function", "framework": "numpy" | "torch", "reference": "module:function",
                      "outputs": [str], "forbidden": [str], "builds_on": [unit], "substitute": SOURCE,
                      "probes": [{"name", "points", "args": [[name, SPEC]], "checks": [COMPARATOR],
                                  "dtype": "float32" | "float64", "device": "cpu" | "cuda" | "meta", "options"}],
                     "mistakes": [{"says": TEXT, "source": SOURCE}]}   # its mutants (optional)

    SPEC names exactly one input generator (the grader's registry, grade/scoring/inputs.py):
      {"normal": shape, "scale": s, "common": c}   standard normal draws times s; every row plus a shared
                                                   component of length c (optional)
      {"mask": shape, "p": p, "empty_rows": [i]}   bool, True = may attend, each row with one True unless listed
      {"ones": shape}                              all ones
      {"simplex": shape}                           non-negative rows (last axis) that sum to 1
      {"value": literal}                           an int, float or bool as it is
      {"device": true}                             the probe's device, as a string
    A shape's sizes are numbers or names of the probe's options "dims" ({"T": [2, 8]}: drawn per grading from
    the probe's seed, inclusive; options "distinct" [["T_q", "T_k"]]: those get different sizes).
    plus "keyword" (pass by name) and "student_only" (not passed to the reference). COMPARATOR names one
    of the grader's comparators (grade/scoring/comparators.py CHECKS).
"""

import re
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from .inkernel.errors import GraderError

CHECKS_FORMAT = 2  # 2: each unit says its kind (an assignment may mix questions and functions)
# The student notebook's export cell (builder -> grader): `from export_written import export`, then
# `export(grader, ...)`, the module the build ships beside the notebook (attn_ref/release/cells/export_written.py).
# A graded kernel's folder holds no such module, so the grader skips that cell as it skips a bare grader.export().
EXPORT_MODULE = "export_written"
EXPORT_FUNCTION = "export"


class InvalidChecks(GraderError, ValueError):
    """Checks that do not follow the format: the message names the field (or the answer or probe)."""


UNIT_KINDS = ("question", "function")
MAX_VARIANTS = 64  # combinations of one question's parameters (each one's answers are computed at build time)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
ANSWER_KINDS = ("int", "float", "bool", "choice", "int_dict")  # typerules.read's kinds
PROBE_DTYPES = ("float32", "float64")
PROBE_DEVICES = ("cpu", "cuda", "meta")
# the input generators of grade/scoring/inputs.py (GENERATORS), by name: how a typed Arg finds its own
GENERATOR_NAMES = ("normal", "mask", "ones", "simplex", "value", "device")
ARRAY_GENERATORS = ("normal", "mask", "ones", "simplex")  # those whose parameter is a shape
ARG_FLAGS = ("keyword", "student_only")  # an argument's spec: its generator's parameters and these
MAX_SIZE = 4096  # one axis of a probe's array
# one probe's array, all axes at their largest (the lab's largest holds under 2,000): (4096, 4096, 64) passed the
# axis rule and held the grader on 8 GB of float64 before the first student
MAX_ELEMENTS = 1 << 20
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_MISSING = object()
# grades.csv's own columns (classroom/gradebook.py), beside one column per unit and one per written part (its
# question's name + WRITTEN): a unit named as one of them would share its column, and one student's row would
# carry a score in the place of a name or a total
GRADEBOOK_COLUMNS = frozenset({"name", "sid", "email", "submission", "total", "adjusted total", "status",
                               "adjustments", "grader", "autograder"})
WRITTEN = "_written"


def unit_name_problem(name) -> str:
    """Why ``name`` cannot name a unit (a question or a task), or ""."""
    if not _is_name(name):
        return "expected a Python name (a letter or _, then letters, digits or _; at most 64)"
    if name.lower() in GRADEBOOK_COLUMNS:
        return f"{name!r} is one of grades.csv's own columns ({', '.join(sorted(GRADEBOOK_COLUMNS))}): rename the unit"
    if name.lower().endswith(WRITTEN):
        return f"{name!r} ends in {WRITTEN!r}, which names a written part's column in grades.csv: rename the unit"
    return ""


def _check(condition: bool, where: str, what: str) -> None:
    if not condition:
        raise InvalidChecks(f"{where}: {what}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_name(value) -> bool:
    return isinstance(value, str) and bool(_NAME.match(value))


def _is_texts(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


class _Object:
    """One JSON object as it is read: each field is checked as it is taken, so a complaint names the field."""

    def __init__(self, value, where: str):
        _check(isinstance(value, dict), where or "checks.json", "expected an object")
        self.fields, self.where = value, where

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def has(self, key: str) -> bool:
        return key in self.fields

    def take(self, key: str, test: Callable[[object], bool], what: str, default=_MISSING):
        value = self.fields.get(key, default)
        _check(value is not _MISSING and test(value), self.at(key), what)
        return value

    def text(self, key: str, limit: int = 4000, default=_MISSING) -> str:
        return self.take(key, lambda v: isinstance(v, str) and len(v) <= limit, f"expected a string of at most {limit:,} characters",
                         default)

    def number(self, key: str) -> float:
        return self.take(key, lambda v: _is_number(v) and v >= 0, "expected a number >= 0")

    def one_of(self, key: str, allowed: tuple, what: str = "") -> str:
        return self.take(key, lambda v: v in allowed, what or f"expected one of {', '.join(allowed)}")

    def items(self, key: str, what: str = "expected a list", default=_MISSING, nonempty: bool = True) -> list:
        return self.take(key, lambda v: isinstance(v, list) and (bool(v) or not nonempty), what, default)


# ---- free-form values: frozen when typed, thawed when written ---------------------------------------

def _frozen(value):
    """JSON data made read-only: lists become tuples, objects read-only mappings."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


def _thawed(value):
    """The JSON data a frozen value was made from."""
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    return value


def _empty() -> Mapping:
    return MappingProxyType({})


# ---- answers and questions --------------------------------------------------------------------------

def _fits(kind: str, expected) -> bool:
    """Whether a value read from checks.json can be the expected answer of that kind."""
    if kind == "int":  # a whole number: a student's 8/3 could never be "equal" to the key
        return _is_number(expected) and float(expected).is_integer()
    if kind == "float":
        return _is_number(expected)
    if kind == "bool":
        return isinstance(expected, bool)
    if kind == "choice":
        return isinstance(expected, str) and len(expected) == 1
    return isinstance(expected, list) and all(isinstance(p, list) and len(p) == 2 and all(map(_is_number, p)) for p in expected)


def _expected_json(kind: str, expected):
    """An answer's expected value as checks.json holds it: an int_dict's (key, value) pairs, sorted."""
    if kind == "int_dict" and isinstance(expected, Mapping):
        return sorted(expected.items())
    return _thawed(expected)


def _letters_apart(choices: tuple, letters: str) -> bool:
    """A multiple-choice answer's letters: one ASCII letter each, no two alike in either case."""
    one_each = all(isinstance(letter, str) and len(letter) == 1 and letter.isascii() and letter.isalpha()
                   for letter, _ in choices)
    return one_each and len(set(letters.upper())) == len(letters)


@dataclass(frozen=True)
class Answer:
    """An auto-graded variable the student assigns, read with the type rules (attn_ref/portable/typerules.py).

    The instructor writes one in question.py; checks.json carries what grading needs. ``choices``, ``low``
    and ``high`` are the builder's alone (the prompt's options, the public range check): read back from
    checks.json, a multiple-choice answer keeps only its ``letters``."""

    name: str
    kind: str  # one of ANSWER_KINDS
    expected: object  # computed with the reference where the question is; a letter for "choice"; int_dict: a dict (built) or ((key, value), ...) (read)
    points: float = 1.0
    choices: tuple[tuple[str, str], ...] = ()  # (letter, option) for kind == "choice" (the builder's)
    low: float | None = None  # a plausible range, checked publicly (never the value; the builder's)
    high: float | None = None
    # known wrong values (an int or float answer) and what each means, told to a student who gives one
    mistakes: tuple[tuple[float, str], ...] = ()
    letters: str = ""  # the choices' letters (from ``choices`` when built)

    def __post_init__(self):
        if self.choices and not self.letters:
            object.__setattr__(self, "letters", "".join(letter for letter, _ in self.choices))
        if self.kind not in ANSWER_KINDS:
            raise InvalidChecks(f"{self.name}: unknown answer kind {self.kind!r}; use one of {', '.join(ANSWER_KINDS)}")
        if (self.kind == "choice") != bool(self.letters):
            raise InvalidChecks(f"{self.name}: a multiple-choice answer needs choices, and only it")
        if not _letters_apart(self.choices, self.letters):
            raise InvalidChecks(f"{self.name}: the choices' letters {self.letters!r}: one letter each, no two alike (a "
                                "student answers with one, in either case)")
        if self.kind == "choice" and self.expected not in tuple(self.letters):
            raise InvalidChecks(f"{self.name}: the expected letter {self.expected!r} is not one of the choices")
        if self.mistakes and self.kind not in ("int", "float"):
            raise InvalidChecks(f"{self.name}: mistakes (known wrong values) are for int and float answers")
        for wrong, says in self.mistakes:
            if not isinstance(says, str) or not says or wrong == self.expected or (
                    self.kind == "float" and abs(wrong - self.expected) <= 5e-3 * abs(self.expected)):
                raise InvalidChecks(f"{self.name}: the mistake {wrong!r} needs a description and a value that is not "
                                    f"accepted as the answer")

    def to_json(self) -> dict:
        data = {"name": self.name, "kind": self.kind, "points": self.points,
                "expected": _expected_json(self.kind, self.expected), "letters": self.letters}
        if self.mistakes:
            data["mistakes"] = [[wrong, says] for wrong, says in self.mistakes]
        return data

    @classmethod
    def from_json(cls, value, where: str) -> "Answer":
        a = _Object(value, where)
        name = a.take("name", _is_name, "expected a Python name")
        kind = a.one_of("kind", ANSWER_KINDS)
        points = a.number("points")
        _check(a.has("expected"), a.at("expected"), "missing")
        expected = a.take("expected", lambda v: _fits(kind, v), f"expected a value of kind {kind}")
        letters = a.text("letters", 26, default="")
        mistakes = a.take("mistakes", lambda v: isinstance(v, list) and all(
            isinstance(m, list) and len(m) == 2 and _is_number(m[0]) for m in v), "expected [[value, description], ...]", [])
        for i, (_, says) in enumerate(mistakes):
            _check(isinstance(says, str) and len(says) <= 300, f"{a.at('mistakes')}[{i}]", "expected a string")
        return cls(name, kind, _frozen(expected), points,
                   mistakes=tuple((wrong, says) for wrong, says in mistakes), letters=letters)


def _is_parameter(p) -> bool:
    """[name, [number, ...]]: a parameter of a question's variants."""
    return (isinstance(p, list) and len(p) == 2 and _is_name(p[0]) and isinstance(p[1], list) and bool(p[1])
            and all(map(_is_number, p[1])))


@dataclass(frozen=True)
class QuestionUnit:
    name: str
    title: str = ""
    answers: tuple[Answer, ...] = ()  # the default variant's (the note's numbers)
    starter: str = ""
    parameters: tuple[tuple[str, tuple], ...] = ()  # (name, allowed values): per-student variants, if any
    defaults: Mapping = field(default_factory=_empty)
    variant_expected: tuple[tuple, ...] = ()  # each combination's expected values, in the answers' order

    def variant(self, index: int | None) -> tuple[Answer, ...]:
        """The answers of one variant (None: the default); a variant's numbers name no known mistakes."""
        if index is None or not self.parameters:
            return self.answers
        return tuple(replace(a, expected=e, mistakes=()) for a, e in zip(self.answers, self.variant_expected[index]))

    def to_json(self) -> dict:
        data = {"kind": "question", "name": self.name, "title": self.title, "starter": self.starter,
                "answers": [a.to_json() for a in self.answers]}
        if self.parameters:
            data["variants"] = {
                "parameters": [[name, list(values)] for name, values in self.parameters],
                "defaults": dict(self.defaults),
                "expected": [[_expected_json(a.kind, e) for a, e in zip(self.answers, row)] for row in self.variant_expected]}
        return data

    @classmethod
    def from_json(cls, unit: _Object, name: str, title: str, starter: str) -> "QuestionUnit":
        answers = unit.items("answers")
        typed = tuple(Answer.from_json(answer, f"{unit.at('answers')}[{i}]") for i, answer in enumerate(answers))
        parameters, defaults, expected = _variants(unit, [a.kind for a in typed]) if unit.has("variants") else ([], {}, [])
        return cls(name, title, typed, starter,
                   tuple((name, tuple(values)) for name, values in parameters), _frozen(defaults),
                   tuple(tuple(_frozen(e) for e in row) for row in expected))


def _variants(unit: _Object, kinds: list[str]) -> tuple[list, dict, list]:
    """A question's variants: (parameters, defaults, each combination's expected answers), checked."""
    variants = _Object(unit.take("variants", lambda v: True, ""), unit.at("variants"))
    parameters = variants.take("parameters", lambda v: isinstance(v, list) and bool(v) and all(map(_is_parameter, v)),
                               "expected [[name, [number, ...]], ...]")
    count = 1
    for _, values in parameters:
        count *= len(values)
    _check(count <= MAX_VARIANTS, variants.at("parameters"), f"at most {MAX_VARIANTS} combinations")
    defaults = variants.take("defaults", lambda v: isinstance(v, dict) and set(v) == {p[0] for p in parameters}
                             and all(v[name] in values for name, values in parameters),
                             "expected one allowed value per parameter")
    expected = variants.take("expected", lambda v: isinstance(v, list) and len(v) == count and all(
        isinstance(e, list) and len(e) == len(kinds) and all(map(_fits, kinds, e)) for e in v),
        f"expected {count} lists of {len(kinds)} answers, each of its answer's kind")
    return parameters, defaults, expected


# ---- probes and functions ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Arg:
    """One argument of a probe: its name and its spec, which names the input generator that makes it
    (GENERATORS) with that generator's parameters, plus the flags ``keyword`` (pass by name) and
    ``student_only`` (not passed to the reference). The spec is kept as written, so it goes back out as it came."""

    name: str
    spec: Mapping = field(default_factory=_empty)

    def __post_init__(self):
        object.__setattr__(self, "spec", _frozen(self.spec))

    @property
    def params(self) -> Mapping:
        """The generator's parameters, its own key included ({"normal": shape, "scale": s})."""
        return MappingProxyType({k: v for k, v in self.spec.items() if k not in ARG_FLAGS})

    @property
    def generator(self) -> str:
        return next((key for key in self.params if key in GENERATOR_NAMES), next(iter(self.params), ""))

    @property
    def keyword(self) -> bool:
        return bool(self.spec.get("keyword"))

    @property
    def student_only(self) -> bool:
        return bool(self.spec.get("student_only"))

    def to_json(self) -> list:
        return [self.name, _thawed(self.spec)]

    @classmethod
    def from_json(cls, pair, at: str, generators: Container | None, dims: Mapping) -> "Arg":
        """One [name, spec]: exactly one input generator, its shape in bounds or named in the probe's dims."""
        _check(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], dict), at,
               "expected [name, spec]")
        name, spec = pair
        kinds = [key for key in spec if generators is None or key in generators]
        _check(len(kinds) == 1 or generators is None, at,
               f"the spec must name exactly one input generator ({', '.join(sorted(generators or ()))})")
        for key in (k for k in spec if k in ARRAY_GENERATORS):
            shape = spec[key]
            _check(isinstance(shape, list) and len(shape) <= 6 and all(
                (isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_SIZE) or n in dims for n in shape),
                f"{at}.{key}", f"expected a shape: sizes 0 to {MAX_SIZE}, or names of options.dims")
            elements = 1
            for n in shape:
                elements *= dims[n][1] if isinstance(n, str) else n
            _check(elements <= MAX_ELEMENTS, f"{at}.{key}", f"{elements:,} elements at the largest sizes; at most "
                   f"{MAX_ELEMENTS:,} (a probe's input is small: a general case needs a few rows, not memory)")
        return cls(name, spec)


def _as_arg(arg) -> Arg:
    return arg if isinstance(arg, Arg) else Arg(*arg)


@dataclass(frozen=True)
class Probe:
    """One line of partial credit: call the student's function on generated inputs, check the result.

    args: ``Arg``s, or (name, spec) pairs as a task.py writes them (attn_ref/release/units.py makes the specs:
    normal, mask, ones, simplex, value, device). dtype/device: how float arrays reach the student. checks:
    the grader's comparators (grade/scoring/comparators.py), all of which must pass. options: free-form
    (rtol, atol, dims and distinct of drawn sizes, calls, count_projections)."""

    name: str
    points: float
    args: tuple[Arg, ...] = ()
    checks: tuple[str, ...] = ("matches_reference",)
    dtype: str = "float64"  # one of PROBE_DTYPES
    device: str = "cpu"  # one of PROBE_DEVICES
    options: Mapping = field(default_factory=_empty)

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(map(_as_arg, self.args)))
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "options", _frozen(self.options))
        if self.dtype not in PROBE_DTYPES or self.device not in PROBE_DEVICES:
            raise InvalidChecks(f"probe {self.name!r}: dtype {self.dtype!r} / device {self.device!r}; use one of "
                                f"{', '.join(PROBE_DTYPES)} / {', '.join(PROBE_DEVICES)}")

    def to_json(self) -> dict:
        return {"name": self.name, "points": self.points, "args": [a.to_json() for a in self.args],
                "checks": list(self.checks), "dtype": self.dtype, "device": self.device, "options": _thawed(self.options)}

    @classmethod
    def from_json(cls, value, where: str, generators: Container | None, comparators: Container | None) -> "Probe":
        p = _Object(value, where)
        name = p.text("name", 200)
        points = p.number("points")
        dtype = p.one_of("dtype", PROBE_DTYPES)
        device = p.one_of("device", PROBE_DEVICES)
        options = p.take("options", lambda v: isinstance(v, dict), "expected an object", {})
        checks = p.items("checks", "expected a list of comparators")
        for comparator in checks:
            _check(comparators is None or comparator in comparators, p.at("checks"), f"unknown comparator {comparator!r}")
        dims = _dims(options, p.at("options"))
        _check(options.get("calls", 1) in (1, 2, 3), p.at("options.calls"), "expected 1, 2 or 3")
        args = p.items("args", nonempty=False)
        typed = tuple(Arg.from_json(pair, f"{p.at('args')}[{i}]", generators, dims) for i, pair in enumerate(args))
        return cls(name, points, typed, tuple(checks), dtype, device, options)


def _distinct_possible(bounds: list[list[int]]) -> bool:
    """Whether each inclusive range can take a size no other takes: the range that ends first takes its
    smallest free size (for intervals the greedy choice is optimal), so drawing until all differ ends."""
    taken: set[int] = set()
    for low, high in sorted(bounds, key=lambda b: b[1]):
        free = next((v for v in range(low, high + 1) if v not in taken), None)
        if free is None:
            return False
        taken.add(free)
    return True


def _dims(options: dict, where: str) -> dict:
    """options.dims {name: [low, high]} and options.distinct [[name, ...]], checked: sizes a probe draws."""
    dims = options.get("dims", {})
    _check(isinstance(dims, dict) and all(
        isinstance(name, str) and isinstance(r, list) and len(r) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in r)
        and 0 <= r[0] <= r[1] <= MAX_SIZE for name, r in dims.items()), where + ".dims", f"expected {{name: [low, high]}}, 0 <= low <= high <= {MAX_SIZE}")
    for group in options.get("distinct", []):
        _check(isinstance(group, list) and all(n in dims for n in group), where + ".distinct", "expected groups of names of dims")
        _check(_distinct_possible([dims[n] for n in group]), where + ".distinct", "the ranges are too narrow for different sizes")
    return dims


@dataclass(frozen=True)
class Mistake:
    """A declared mutant of a function unit: what a student is told when their outputs match its outputs."""

    says: str
    source: str

    def to_json(self) -> dict:
        return {"says": self.says, "source": self.source}

    @classmethod
    def from_json(cls, value, where: str) -> "Mistake":
        m = _Object(value, where)
        return cls(m.text("says", 300), m.text("source", 100_000))


@dataclass(frozen=True)
class FunctionUnit:
    name: str
    title: str = ""
    function: str = ""
    framework: str = "numpy"  # numpy | torch
    reference: str = ""  # "module:function"
    outputs: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    builds_on: tuple[str, ...] = ()
    substitute: str = ""
    probes: tuple[Probe, ...] = ()
    starter: str = ""
    mistakes: tuple[Mistake, ...] = ()  # the task's mutants, matched against failed probes (scoring/mutant_match.py)

    def to_json(self) -> dict:
        return {"kind": "function", "name": self.name, "title": self.title, "function": self.function,
                "framework": self.framework, "reference": self.reference, "outputs": list(self.outputs),
                "forbidden": list(self.forbidden), "builds_on": list(self.builds_on), "substitute": self.substitute,
                "starter": self.starter, "probes": [p.to_json() for p in self.probes],
                "mistakes": [m.to_json() for m in self.mistakes]}

    @classmethod
    def from_json(cls, unit: _Object, name: str, title: str, starter: str, generators: Container | None,
                  comparators: Container | None) -> "FunctionUnit":
        function = unit.take("function", _is_name, "expected a name")
        framework = unit.one_of("framework", ("numpy", "torch"), "expected numpy or torch")
        reference = unit.take("reference", lambda v: isinstance(v, str) and v.count(":") == 1, "expected 'module:function'")
        outputs, forbidden, builds_on = (unit.take(key, _is_texts, "expected a list of strings")
                                         for key in ("outputs", "forbidden", "builds_on"))
        _check(bool(outputs), unit.at("outputs"), "expected at least one output")
        substitute = unit.text("substitute", 100_000, default="")
        mistakes = unit.take("mistakes", lambda v: isinstance(v, list) and len(v) <= 100, "expected a list", [])
        typed_mistakes = tuple(Mistake.from_json(m, f"{unit.at('mistakes')}[{i}]") for i, m in enumerate(mistakes))
        probes = unit.items("probes")
        typed = tuple(Probe.from_json(p, f"{unit.at('probes')}[{i}]", generators, comparators) for i, p in enumerate(probes))
        names = [p.name for p in typed]
        twice = sorted({n for n in names if names.count(n) > 1})
        _check(not twice, unit.at("probes"), f"two probes are named {(twice or [''])[0]!r}: a results line, a "
               "'# must fail:' and a class's mistakes.csv tell probes apart by name; give each its own")
        return cls(name, title, function, framework, reference, tuple(outputs), tuple(forbidden), tuple(builds_on),
                   substitute, typed, starter, typed_mistakes)


Unit = QuestionUnit | FunctionUnit


def _unit(value, where: str, generators: Container | None, comparators: Container | None) -> Unit:
    unit = _Object(value, where)
    kind = unit.one_of("kind", UNIT_KINDS)
    name = unit.take("name", lambda v: isinstance(v, str), "expected a name")
    _check(not unit_name_problem(name), unit.at("name"), unit_name_problem(name))
    title = unit.text("title", 200)
    starter = unit.text("starter", 100_000, default="")
    if kind == "question":
        return QuestionUnit.from_json(unit, name, title, starter)
    return FunctionUnit.from_json(unit, name, title, starter, generators, comparators)


def _units_together(units: tuple[Unit, ...]) -> None:
    """What holds between units: distinct names, and each function built only on earlier functions."""
    names = [u.name for u in units]
    _check(len(set(names)) == len(names), "units", "two units share a name")
    # one notebook, one namespace: a second unit assigning the same variable (or defining it as its function)
    # would replace the first's before it is graded
    owner: dict[str, str] = {}
    for unit in units:
        for variable in (a.name for a in unit.answers) if isinstance(unit, QuestionUnit) else (unit.function,):
            _check(variable not in owner, f"units.{unit.name}", f"{variable!r} is also {owner.get(variable)}'s: the "
                   "notebook is one namespace, so one would replace the other; give each unit its own names (a prefix)")
            owner[variable] = unit.name
    functions = [u.name for u in units if isinstance(u, FunctionUnit)]
    for unit in (u for u in units if isinstance(u, FunctionUnit)):
        for earlier in unit.builds_on:
            _check(earlier in functions[: functions.index(unit.name)], f"units.{unit.name}.builds_on",
                   f"{earlier!r} is not an earlier function unit")


# ---- the whole -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WrittenPart:
    """A question's written part: graded by hand, exported from the notebook."""

    question: str
    prompt: str = ""
    title: str = ""
    name: str = ""
    points: float = 1.0

    def to_json(self) -> dict:
        return {"name": self.name, "question": self.question, "title": self.title, "prompt": self.prompt,
                "points": self.points}

    @classmethod
    def from_json(cls, value, where: str, questions: set[str]) -> "WrittenPart":
        _check(isinstance(value, dict) and value.get("question") in questions, where, "expected a question of this assignment")
        w = _Object(value, where)
        return cls(w.text("question", 200), w.text("prompt", 100_000, ""), w.text("title", 200, ""), w.text("name", 200, ""),
                   w.take("points", _is_number, "expected a number", 1.0))


def _is_reference(module, path) -> bool:
    return isinstance(module, str) and (path is None or (isinstance(path, str) and path.startswith("references/")
                                                         and ".." not in path))


@dataclass(frozen=True)
class Checks:
    """checks.json, typed: what the builder writes and the grader reads."""

    assignment: str
    units: tuple[Unit, ...] = ()
    written: tuple[WrittenPart, ...] = ()
    title: str = ""
    runner: str = "cpu"  # cpu | gpu
    visibility: str = "hidden"  # one of VISIBILITIES
    version: str = ""  # everything that decides a score (added by the builder's stamp)
    seed_key: str = ""  # the probes and answers alone (added by the builder's stamp)
    references: Mapping = field(default_factory=_empty)  # module -> None (attn_ref's own) | "references/<file>.py"
    helpers: str = ""  # the setup and solution code the mistakes' mutants call (scoring/mutant_match.py)
    variant_key: str = ""  # which identity gets which variant (attn_ref/portable/variants.py)

    def unit(self, name: str) -> Unit:
        return next(u for u in self.units if u.name == name)

    @property
    def by_name(self) -> dict[str, Unit]:
        return {u.name: u for u in self.units}

    @property
    def questions(self) -> tuple[QuestionUnit, ...]:
        return tuple(u for u in self.units if isinstance(u, QuestionUnit))

    @property
    def functions(self) -> tuple[FunctionUnit, ...]:
        return tuple(u for u in self.units if isinstance(u, FunctionUnit))

    def to_json(self) -> dict:
        """checks.json's content; ``version``, ``seed_key`` and ``variant_key`` only when they are set."""
        data = {"format": CHECKS_FORMAT, "assignment": self.assignment, "title": self.title, "runner": self.runner,
                "visibility": self.visibility, "units": [u.to_json() for u in self.units],
                "written": [w.to_json() for w in self.written], "references": dict(self.references),
                "helpers": self.helpers}
        data.update({key: value for key in ("variant_key", "seed_key", "version") if (value := getattr(self, key))})
        return data

    @classmethod
    def from_json(cls, value, generators: Container | None = None, comparators: Container | None = None) -> "Checks":
        """checks.json as read: InvalidChecks names the first field that is wrong. ``generators`` and
        ``comparators``: the reader's registries (names a probe may use)."""
        c = _Object(value, "")
        c.take("format", lambda v: v == CHECKS_FORMAT, f"expected {CHECKS_FORMAT} (rebuild the autograder with this version)")
        assignment, title, version, seed_key = (c.text(key, 200) for key in ("assignment", "title", "version", "seed_key"))
        runner = c.one_of("runner", ("cpu", "gpu"), "expected cpu or gpu")
        visibility = c.one_of("visibility", VISIBILITIES)
        units = tuple(_unit(u, f"units[{i}]", generators, comparators) for i, u in enumerate(c.items("units")))
        _units_together(units)
        questions = {u.name for u in units if isinstance(u, QuestionUnit)}
        written = tuple(WrittenPart.from_json(w, f"written[{i}]", questions)
                        for i, w in enumerate(c.items("written", default=[], nonempty=False)))
        variant_key = c.text("variant_key", 200) if any(u.parameters for u in units if isinstance(u, QuestionUnit)) else ""
        helpers = c.text("helpers", 1_000_000, default="")
        references = c.take("references", lambda v: isinstance(v, dict), "expected an object", {})
        for module, path in references.items():
            _check(_is_reference(module, path), f"references.{module}", "expected null or references/<file>.py")
        return cls(assignment, units, written, title, runner, visibility, version, seed_key, _frozen(references),
                   helpers, variant_key)


def read_checks(data, generators: Container | None = None, comparators: Container | None = None) -> Checks:
    """What a reader of checks.json works with: ``Checks.from_json``."""
    return Checks.from_json(data, generators, comparators)
