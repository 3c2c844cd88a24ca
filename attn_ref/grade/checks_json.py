"""checks.json: the hidden checks as data, from the builder to the grader inside the autograder zip.

Validated field by field where it is read (``validate_checks``), then typed (``typed_checks``; both at once:
``read_checks``): the grader reads frozen dataclasses (``Checks``, its ``QuestionUnit``s with their ``Answer``s
or ``FunctionUnit``s with their ``Probe``s and each probe's ``Arg``s, ``WrittenPart``s), never the raw dict;
plain mappings remain only for what is free-form (a generator's parameters, a probe's options, the
references). The builder writes it (``attn_ref/release/checks.py``). Standard library only.

**checks.json** (builder -> grader, inside the autograder zip; ``validate_checks``)::

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
from collections.abc import Mapping
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
    """A checks.json that does not follow the format: the message names the field."""


UNIT_KINDS = ("question", "function")
MAX_VARIANTS = 64  # combinations of one question's parameters (each one's answers are computed at build time)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
ANSWER_KINDS = ("int", "float", "bool", "choice", "int_dict")
PROBE_DTYPES = ("float32", "float64")
PROBE_DEVICES = ("cpu", "cuda", "meta")
# the input generators of grade/scoring/inputs.py (GENERATORS), by name: how a typed Arg finds its own
GENERATOR_NAMES = ("normal", "mask", "ones", "simplex", "value", "device")
ARRAY_GENERATORS = ("normal", "mask", "ones", "simplex")  # those whose parameter is a shape
MAX_SIZE = 4096  # one axis of a probe's array
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _check(condition: bool, where: str, what: str) -> None:
    if not condition:
        raise InvalidChecks(f"{where}: {what}")


def _text(value, where: str, limit: int = 4000) -> None:
    _check(isinstance(value, str) and len(value) <= limit, where, "expected a string")


def _number(value, where: str) -> None:
    _check(isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0, where, "expected a number >= 0")


def _answer(answer, where: str) -> None:
    _check(isinstance(answer, dict), where, "expected an object")
    _check(isinstance(answer.get("name"), str) and bool(_NAME.match(answer["name"])), where + ".name", "expected a Python name")
    _check(answer.get("kind") in ANSWER_KINDS, where + ".kind", f"expected one of {', '.join(ANSWER_KINDS)}")
    _number(answer.get("points"), where + ".points")
    _check("expected" in answer, where + ".expected", "missing")
    _text(answer.get("letters", ""), where + ".letters", 26)
    mistakes = answer.get("mistakes", [])
    _check(isinstance(mistakes, list) and all(isinstance(m, list) and len(m) == 2 and isinstance(m[0], (int, float))
                                              and not isinstance(m[0], bool) for m in mistakes),
           where + ".mistakes", "expected [[value, description], ...]")
    for i, (_, says) in enumerate(mistakes):
        _text(says, f"{where}.mistakes[{i}]", 300)


def _probe(probe, where: str, generators, comparators) -> None:
    _check(isinstance(probe, dict), where, "expected an object")
    _text(probe.get("name"), where + ".name", 200)
    _number(probe.get("points"), where + ".points")
    _check(probe.get("dtype") in PROBE_DTYPES, where + ".dtype", f"expected one of {', '.join(PROBE_DTYPES)}")
    _check(probe.get("device") in PROBE_DEVICES, where + ".device", f"expected one of {', '.join(PROBE_DEVICES)}")
    _check(isinstance(probe.get("options", {}), dict), where + ".options", "expected an object")
    checks = probe.get("checks")
    _check(isinstance(checks, list) and bool(checks), where + ".checks", "expected a list of comparators")
    for name in checks:
        _check(comparators is None or name in comparators, where + ".checks", f"unknown comparator {name!r}")
    dims = _dims(probe.get("options", {}), where + ".options")
    calls = probe.get("options", {}).get("calls", 1) if isinstance(probe.get("options"), dict) else 1
    _check(calls in (1, 2, 3), where + ".options.calls", "expected 1, 2 or 3")
    args = probe.get("args")
    _check(isinstance(args, list), where + ".args", "expected a list")
    for i, pair in enumerate(args):
        _arg(pair, f"{where}.args[{i}]", generators, dims)


def _arg(pair, at: str, generators, dims: dict) -> None:
    """One [name, spec] of a probe's args: exactly one input generator, its shape in bounds or named in dims."""
    _check(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], dict), at,
           "expected [name, spec]")
    kinds = [key for key in pair[1] if generators is None or key in generators]
    _check(len(kinds) == 1 or generators is None, at, f"the spec must name exactly one input generator ({', '.join(sorted(generators or ()))})")
    for key in (k for k in pair[1] if k in ARRAY_GENERATORS):
        shape = pair[1][key]
        _check(isinstance(shape, list) and len(shape) <= 6 and all(
            (isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_SIZE) or n in dims for n in shape),
            f"{at}.{key}", f"expected a shape: sizes 0 to {MAX_SIZE}, or names of options.dims")


def _is_parameter(p) -> bool:
    """[name, [number, ...]]: a parameter of a question's variants."""
    return (isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and bool(_NAME.match(p[0])) and isinstance(p[1], list)
            and bool(p[1]) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p[1]))


def _variants(variants, answers: int, where: str) -> None:
    _check(isinstance(variants, dict), where, "expected an object")
    parameters = variants.get("parameters")
    _check(isinstance(parameters, list) and bool(parameters) and all(map(_is_parameter, parameters)),
           where + ".parameters", "expected [[name, [number, ...]], ...]")
    count = 1
    for _, values in parameters:
        count *= len(values)
    _check(count <= MAX_VARIANTS, where + ".parameters", f"at most {MAX_VARIANTS} combinations")
    defaults = variants.get("defaults")
    _check(isinstance(defaults, dict) and set(defaults) == {p[0] for p in parameters}
           and all(defaults[name] in values for name, values in parameters), where + ".defaults", "expected one allowed value per parameter")
    expected = variants.get("expected")
    _check(isinstance(expected, list) and len(expected) == count and all(isinstance(e, list) and len(e) == answers for e in expected),
           where + ".expected", f"expected {count} lists of {answers} answers")


def _dims(options, where: str) -> dict:
    """options.dims {name: [low, high]} and options.distinct [[name, ...]], checked: sizes a probe draws."""
    if not isinstance(options, dict):
        return {}
    dims = options.get("dims", {})
    _check(isinstance(dims, dict) and all(
        isinstance(name, str) and isinstance(r, list) and len(r) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in r)
        and 0 <= r[0] <= r[1] <= MAX_SIZE for name, r in dims.items()), where + ".dims", f"expected {{name: [low, high]}}, 0 <= low <= high <= {MAX_SIZE}")
    for group in options.get("distinct", []):
        _check(isinstance(group, list) and all(n in dims for n in group), where + ".distinct", "expected groups of names of dims")
        _check(len(set(range(min(dims[n][0] for n in group), max(dims[n][1] for n in group) + 1))) >= len(group),
               where + ".distinct", "the ranges are too narrow for different sizes")
    return dims


def _unit(unit, where: str, generators, comparators) -> None:
    _check(isinstance(unit, dict), where, "expected an object")
    _check(unit.get("kind") in UNIT_KINDS, where + ".kind", f"expected one of {', '.join(UNIT_KINDS)}")
    _check(isinstance(unit.get("name"), str) and bool(_NAME.match(unit["name"])), where + ".name", "expected a name")
    _text(unit.get("title"), where + ".title", 200)
    _text(unit.get("starter", ""), where + ".starter", 100_000)
    if unit["kind"] == "question":
        answers = unit.get("answers")
        _check(isinstance(answers, list) and bool(answers), where + ".answers", "expected a list")
        for i, answer in enumerate(answers):
            _answer(answer, f"{where}.answers[{i}]")
        if "variants" in unit:
            _variants(unit["variants"], len(answers), where + ".variants")
        return
    _check(isinstance(unit.get("function"), str) and bool(_NAME.match(unit["function"])), where + ".function", "expected a name")
    _check(unit.get("framework") in ("numpy", "torch"), where + ".framework", "expected numpy or torch")
    reference = unit.get("reference")
    _check(isinstance(reference, str) and reference.count(":") == 1, where + ".reference", "expected 'module:function'")
    for field_name in ("outputs", "forbidden", "builds_on"):
        value = unit.get(field_name)
        _check(isinstance(value, list) and all(isinstance(v, str) for v in value), f"{where}.{field_name}", "expected a list of strings")
    _check(bool(unit["outputs"]), where + ".outputs", "expected at least one output")
    _text(unit.get("substitute", ""), where + ".substitute", 100_000)
    mistakes = unit.get("mistakes", [])
    _check(isinstance(mistakes, list) and len(mistakes) <= 100, where + ".mistakes", "expected a list")
    for i, mistake in enumerate(mistakes):
        _check(isinstance(mistake, dict), f"{where}.mistakes[{i}]", "expected an object")
        _text(mistake.get("says"), f"{where}.mistakes[{i}].says", 300)
        _text(mistake.get("source"), f"{where}.mistakes[{i}].source", 100_000)
    probes = unit.get("probes")
    _check(isinstance(probes, list) and bool(probes), where + ".probes", "expected a list")
    for i, probe in enumerate(probes):
        _probe(probe, f"{where}.probes[{i}]", generators, comparators)


def _units_together(units: list) -> None:
    """What holds between units: distinct names, and each function built only on earlier functions."""
    names = [u["name"] for u in units]
    _check(len(set(names)) == len(names), "units", "two units share a name")
    functions = [u["name"] for u in units if u["kind"] == "function"]
    for unit in (u for u in units if u["kind"] == "function"):
        for earlier in unit["builds_on"]:
            _check(earlier in functions[: functions.index(unit["name"])], f"units.{unit['name']}.builds_on",
                   f"{earlier!r} is not an earlier function unit")


def validate_checks(checks, generators=None, comparators=None) -> dict:
    """checks.json as read: InvalidChecks names the first field that is wrong. ``generators`` and
    ``comparators``: the reader's registries (names a probe may use)."""
    _check(isinstance(checks, dict), "checks.json", "expected an object")
    _check(checks.get("format") == CHECKS_FORMAT, "format", f"expected {CHECKS_FORMAT} (rebuild the autograder with this version)")
    for name in ("assignment", "title", "version", "seed_key"):
        _text(checks.get(name), name, 200)
    _check(checks.get("runner") in ("cpu", "gpu"), "runner", "expected cpu or gpu")
    _check(checks.get("visibility") in VISIBILITIES, "visibility", f"expected one of {', '.join(VISIBILITIES)}")
    units = checks.get("units")
    _check(isinstance(units, list) and bool(units), "units", "expected a list")
    for i, unit in enumerate(units):
        _unit(unit, f"units[{i}]", generators, comparators)
    _units_together(units)
    questions = {u["name"] for u in units if u["kind"] == "question"}
    written = checks.get("written", [])
    _check(isinstance(written, list), "written", "expected a list")
    for i, item in enumerate(written):
        _check(isinstance(item, dict) and item.get("question") in questions, f"written[{i}]", "expected a question of this assignment")
    if any("variants" in u for u in units if u["kind"] == "question"):
        _text(checks.get("variant_key"), "variant_key", 200)
    _text(checks.get("helpers", ""), "helpers", 1_000_000)
    references = checks.get("references", {})
    _check(isinstance(references, dict), "references", "expected an object")
    for module, path in references.items():
        _check(path is None or (isinstance(path, str) and path.startswith("references/") and ".." not in path),
               f"references.{module}", "expected null or references/<file>.py")
    return checks


# ---- typed checks: what the grader reads after validate_checks --------------------------------------

def _frozen(value):
    """JSON data made read-only: lists become tuples, objects read-only mappings."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


def _empty() -> Mapping:
    return MappingProxyType({})


@dataclass(frozen=True)
class Answer:
    """One answer variable of a questions unit."""

    name: str
    kind: str  # one of ANSWER_KINDS
    points: float
    expected: object  # a literal; int_dict: ((key, value), ...)
    letters: str = ""
    mistakes: tuple[tuple[float, str], ...] = ()  # known wrong values, and what each means


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


@dataclass(frozen=True)
class Arg:
    """One argument of a probe: its name and the input generator that makes it (GENERATORS), with that
    generator's parameters as a plain mapping (its own key included: {"normal": shape, "scale": s})."""

    name: str
    generator: str
    params: Mapping = field(default_factory=_empty)
    keyword: bool = False  # passed by name
    student_only: bool = False  # not passed to the reference


@dataclass(frozen=True)
class Probe:
    name: str
    points: float
    dtype: str = "float64"  # one of PROBE_DTYPES
    device: str = "cpu"  # one of PROBE_DEVICES
    checks: tuple[str, ...] = ()  # comparator names
    args: tuple[Arg, ...] = ()
    options: Mapping = field(default_factory=_empty)  # free-form (rtol, atol, count_projections)


@dataclass(frozen=True)
class Mistake:
    """A declared mutant of a function unit: what a student is told when their outputs match its outputs."""

    says: str
    source: str


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
    mistakes: tuple[Mistake, ...] = ()  # the task's mutants, matched against failed probes (mistakes.py)


Unit = QuestionUnit | FunctionUnit


@dataclass(frozen=True)
class WrittenPart:
    """A question's written part: graded by hand, exported from the notebook."""

    question: str
    prompt: str = ""
    title: str = ""
    name: str = ""
    points: float = 1.0


@dataclass(frozen=True)
class Checks:
    """checks.json, validated and typed."""

    assignment: str
    units: tuple[Unit, ...] = ()
    written: tuple[WrittenPart, ...] = ()
    title: str = ""
    runner: str = "cpu"  # cpu | gpu
    visibility: str = "hidden"  # one of VISIBILITIES
    version: str = ""
    seed_key: str = ""
    references: Mapping = field(default_factory=_empty)  # module -> None (attn_ref's own) | "references/<file>.py"
    helpers: str = ""  # the setup and solution code the mistakes' mutants call (mistakes.py)
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


def _typed_arg(pair: list) -> Arg:
    name, spec = pair
    from_spec = {k: v for k, v in spec.items() if k not in ("keyword", "student_only")}
    generator = next((key for key in from_spec if key in GENERATOR_NAMES), next(iter(from_spec), ""))
    return Arg(name, generator, _frozen(from_spec), bool(spec.get("keyword")), bool(spec.get("student_only")))


def _typed_probe(probe: dict) -> Probe:
    return Probe(probe["name"], probe["points"], probe["dtype"], probe["device"], tuple(probe["checks"]),
                 tuple(_typed_arg(pair) for pair in probe["args"]), _frozen(probe.get("options", {})))


def _typed_unit(unit: dict) -> Unit:
    if unit["kind"] == "question":
        answers = tuple(Answer(a["name"], a["kind"], a["points"], _frozen(a["expected"]), a.get("letters", ""),
                               tuple((wrong, says) for wrong, says in a.get("mistakes", [])))
                        for a in unit["answers"])
        variants = unit.get("variants", {})
        return QuestionUnit(unit["name"], unit["title"], answers, unit.get("starter", ""),
                            tuple((name, tuple(values)) for name, values in variants.get("parameters", [])),
                            _frozen(variants.get("defaults", {})),
                            tuple(tuple(_frozen(e) for e in row) for row in variants.get("expected", [])))
    return FunctionUnit(unit["name"], unit["title"], unit["function"], unit["framework"], unit["reference"],
                        tuple(unit["outputs"]), tuple(unit["forbidden"]), tuple(unit["builds_on"]),
                        unit.get("substitute", ""), tuple(_typed_probe(p) for p in unit["probes"]), unit.get("starter", ""),
                        tuple(Mistake(m["says"], m["source"]) for m in unit.get("mistakes", [])))


def typed_checks(checks: dict) -> Checks:
    """Checks from a checks.json that validate_checks accepted (or the builder's body of one, before its
    version and seed key are added)."""
    written = tuple(WrittenPart(w["question"], w.get("prompt", ""), w.get("title", ""), w.get("name", ""),
                                w.get("points", 1.0)) for w in checks.get("written", []))
    return Checks(checks["assignment"], tuple(_typed_unit(u) for u in checks["units"]), written,
                  checks["title"], checks["runner"], checks["visibility"],
                  checks.get("version", ""), checks.get("seed_key", ""), _frozen(checks.get("references", {})),
                  checks.get("helpers", ""), checks.get("variant_key", ""))


def read_checks(data, generators=None, comparators=None) -> Checks:
    """validate_checks, then typed_checks: what a reader of checks.json works with."""
    return typed_checks(validate_checks(data, generators, comparators))
