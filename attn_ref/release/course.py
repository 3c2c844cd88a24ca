"""A course is a folder of assignment folders and a registry; an assignment is a list of unit folders.

    course/
      registry.py              ASSIGNMENTS = (Entry(name, title, folder), ...)
      <folder>/
        assignment.py          ASSIGNMENT = Layout(units=(...), visibility=..., setup=..., exploration=...)
        intro.md               the notebook's first cell
        outro.md               optional: its last cell (after the submission cell), for details kept out of the intro
        <unit>/                question.py (QUESTION) or task.py (TASK, example()), and the files below;
                               the file says the unit's kind, and one assignment may hold both kinds

A question's folder: prompt.md, solution.py (assigns every answer variable), optionally written.md and
written_solution.md. A task's folder: prompt.md, solution.py (the function, its body between
# BEGIN SOLUTION / # END SOLUTION), public_checks.py, optionally substitute.py and mutants/*.py.
Units and references are Python files loaded by path, with the assignment's folder importable, so an
assignment may bring its own reference module. Nothing here knows how grading works.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import importlib
import importlib.util
import itertools
import re
import sys
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

from ..grade.checks_json import VISIBILITIES
from ..grade.scoring.mutant_match import ERROR_NAMES, KEEPS_STATE
from .errors import ReleaseError
from .units import Mutant, Question, Task

UNIT_FILES = ("question.py", "task.py")  # a unit folder holds exactly one: its kind
# everything the build reads from a unit folder, by its kind: anything else is refused, since a misspelt name
# (written_solutions.md, public_check.py) would otherwise be left out without a word
FOLDER_FILES = {"question.py": ("question.py", "prompt.md", "solution.py", "written.md", "written_solution.md"),
                "task.py": ("task.py", "prompt.md", "solution.py", "public_checks.py", "substitute.py", "mutants")}
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # in a source: anything but tab, newline, carriage return
TITLE_LIMIT = 200  # checks.json's reader takes a title of at most this many characters
ENTRY_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}\Z")  # a file name, a Python name and a Gradescope name alike (as `new`'s)


class CourseError(ReleaseError):
    """An assignment's sources are wrong: the message names the file and what to fix."""


@dataclass(frozen=True)
class Entry:
    """One line of the registry."""

    name: str  # the assignment's name: notebooks, zips and grading all use it
    title: str
    folder: str  # relative to the registry
    kind: str | None = field(default=None, repr=False, compare=False)  # removed: says what to change (below)

    def __post_init__(self):
        if not isinstance(self.name, str) or not ENTRY_NAME.match(self.name):
            raise CourseError(f"Entry(name={self.name!r}): an assignment's name names its notebook, its folders, its zip "
                              "and its Gradescope assignment: lower-case letters, digits and _, starting with a letter "
                              "(at most 64; the title may say anything)")
        if not isinstance(self.title, str) or not 0 < len(self.title.strip()) <= TITLE_LIMIT or "\n" in self.title:
            raise CourseError(f"Entry({self.name!r}, title={self.title!r}): a title is one line of 1 to {TITLE_LIMIT} "
                              "characters (the notebook's heading, checks.json's title)")
        if self.kind is not None:  # an instructor's registry from before units said what they are
            raise CourseError(f"Entry({self.name!r}, ..., kind={self.kind!r}): `kind=` is no longer an argument "
                              "(each unit's folder says what it is: question.py or task.py); delete `kind=...`")


@dataclass(frozen=True)
class BuildCheck:
    """A number the executed solution prints, and the least it should be (else the build warns)."""

    pattern: str  # a regular expression whose first group is the number
    minimum: float
    message: str  # may use {value} and {minimum}


@dataclass(frozen=True)
class Layout:
    """An assignment's assignment.py: its units in order, and the cells around them."""

    units: tuple[str, ...]
    visibility: str = "after_due_date"  # of the hidden results on Gradescope
    setup: str = ""  # a .py file: a code cell after the introduction (imports the students need)
    exploration_intro: str = ""  # a .md file before the exploration cells
    exploration: tuple[str, ...] = ()  # .py files: cells after the units, skipped while grading
    timing: tuple[str, ...] = ()  # those of the exploration cells whose outputs hold measured timings
    build_checks: tuple[BuildCheck, ...] = ()
    # which identity gets which variant of a question with parameters: set it once per course and term
    # (not a secret; changing it gives every student new numbers)
    variant_key: str = ""
    # the share of its mutants (stubs aside) `attn-ref check` must hear named in their own words on a line they
    # fail, under every seed of its sweep; below it the build fails, naming the mutants that are not
    named_mutants: float = 0.0

    def __post_init__(self):
        for name in ("units", "exploration", "timing"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise CourseError(f"Layout({name}={value!r}): expected a tuple of names; (\"{value}\") is one string in "
                                  f"brackets: write a comma after it, (\"{value}\",)" if isinstance(value, str) else
                                  f"Layout({name}={value!r}): expected a tuple of names (strings)")


@dataclass(frozen=True)
class Assignment:
    """An assignment, loaded: everything the builder needs, nothing about grading."""

    name: str
    title: str
    folder: Path
    layout: Layout
    intro: str
    units: tuple
    setup: str = ""
    exploration_intro: str = ""
    exploration: tuple[tuple[str, bool], ...] = ()  # (source, holds timings)
    references: tuple[tuple[str, Path | None], ...] = ()  # (module, its file in the folder, or None: attn_ref)
    outro: str = ""  # outro.md: the notebook's last cell, or "" for none

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(u for u in self.units if isinstance(u, Question))

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(u for u in self.units if isinstance(u, Task))


# ---- loading files ------------------------------------------------------------------------------------

def _read(path: Path, required: bool = True) -> str:
    """A source file's text, UTF-8 (whatever the machine's locale); a required Markdown file must say something."""
    if not path.is_file():
        if required:
            raise CourseError(f"{path}: missing (see docs/instructors.md, 'Writing an assignment')")
        return ""
    try:
        text = path.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise CourseError(f"{path}, line {line}: not UTF-8 text (byte {err.object[err.start]:#x}): save it as UTF-8") from None
    if control := CONTROL.search(text):
        raise CourseError(f"{path}, line {text[: control.start()].count(chr(10)) + 1}: a control character "
                          f"({control.group()!r}, often pasted from a PDF or a terminal), which a notebook shows as nothing "
                          "or as a box and LaTeX refuses: delete it")
    if required and path.suffix == ".md" and not text:
        raise CourseError(f"{path}: empty: it becomes a cell students read; write it, or remove what lists it")
    return text


def _python(path: Path, required: bool = True) -> str:
    """A cell's source from a .py file, which must compile: a syntax error stops the build here, with the
    file and line, not as a notebook traceback when the solution runs."""
    source = _read(path, required)
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as err:
        raise CourseError(f"{path}, line {err.lineno}: {err.msg} (this file becomes a notebook cell: fix it "
                          f"so that it runs on its own)") from None
    return source


@contextlib.contextmanager
def _importable(folder: Path):
    """The assignment's folder on sys.path while its files load (its own reference modules import), and
    those modules fresh: never a same-named module another course left in sys.modules."""
    own = [path.stem for path in folder.glob("*.py")]
    for name in own:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        for name in own:
            sys.modules.pop(name, None)


def load_module(path: Path, name: str) -> ModuleType:
    if not path.is_file():
        raise CourseError(f"{path}: missing (see docs/instructors.md, 'Writing an assignment')")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        raise CourseError(f"{path}, line {err.lineno}: SyntaxError: {err.msg}") from err
    except CourseError as err:  # raised by this package's own constructors: its words are the message
        raise CourseError(f"{path}{_line_in(path, err)}: {err}") from err
    except Exception as err:
        raise CourseError(f"{path}{_line_in(path, err)}: {type(err).__name__}: {err}") from err
    return module


def _line_in(path: Path, err: BaseException) -> str:
    """", line N" of the innermost frame of ``err``'s traceback that is in ``path`` (where the instructor looks)."""
    lines = [frame.lineno for frame in traceback.extract_tb(err.__traceback__) if Path(frame.filename) == path]
    return f", line {lines[-1]}" if lines else ""


def _attribute(module: ModuleType, name: str, path: Path):
    if not hasattr(module, name):
        raise CourseError(f"{path}: defines no {name}")
    return getattr(module, name)


def load_registry(course: Path) -> tuple[Entry, ...]:
    registry = Path(course) / "registry.py"
    listed = _attribute(load_module(registry, "_course_registry"), "ASSIGNMENTS", registry)
    if isinstance(listed, Entry):  # (Entry(...)) is one Entry in brackets: the tuple needs its comma
        raise CourseError(f"{registry}: ASSIGNMENTS is one Entry, not a tuple of them: write a comma after it, "
                          "(Entry(...),)")
    entries = tuple(listed)
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise CourseError(f"{registry}: two assignments share a name")
    return entries


# ---- units ---------------------------------------------------------------------------------------------

def _question(folder: Path, module_name: str) -> Question:
    path = folder / "question.py"
    question = _attribute(load_module(path, module_name), "QUESTION", path)
    if question.name != folder.name:
        raise CourseError(f"{path}: the question is called {question.name!r} but its folder {folder.name!r}")
    for values in question.variants() if question.parameters else ():
        try:  # every variant's answers, as the build will compute them: a mistake stops here, with the file
            question.answers_for(values)
        except Exception as err:
            raise CourseError(f"{path}{_line_in(path, err)}: the variant {values}: {type(err).__name__}: {err}") from None
    if (folder / "written_solution.md").is_file() and not (folder / "written.md").is_file():
        raise CourseError(f"{folder / 'written_solution.md'}: the answer to a written part, but {folder.name} has no "
                          "written.md, its prompt: without it the question has no written part and this file is left out")
    return replace(question, prompt=_read(folder / "prompt.md"), solution=_python(folder / "solution.py"),
                   written_prompt=_read(folder / "written.md", False),
                   written_solution=_read(folder / "written_solution.md", False))


def _mutants(folder: Path, task: Task) -> tuple[Mutant, ...]:
    """mutants/*.py: each must be Python that defines the task's function and name (by "# must fail:") only
    probes the task has; a "# stub" line marks one that does none of the task (it must score 0); `attn-ref check` then proves each fails a probe, and the probe it names."""
    found = []
    for path in sorted((folder / "mutants").glob("*.py")):
        source = _read(path)
        header = dict(line[2:].split(": ", 1) for line in source.splitlines() if line.startswith("# ") and ": " in line[:20])
        if "mutant" not in header:
            raise CourseError(f"{path}: start with a line '# mutant: <what is wrong>'")
        try:
            tree = ast.parse(source, filename=str(path))
        except SyntaxError as err:
            raise CourseError(f"{path}, line {err.lineno}: {err.msg}. A mutant runs in place of the student's "
                              f"`{task.function}`, so it must be valid Python") from None
        if not any(isinstance(node, ast.FunctionDef) and node.name == task.function for node in tree.body):
            raise CourseError(f"{path}: defines no `def {task.function}(...)` at the top level: a mutant replaces "
                              f"the task's function with a wrong one")
        must_fail = header.get("must fail", "").strip()
        if must_fail and not any(must_fail in probe.name for probe in task.probes):
            raise CourseError(f"{path}: '# must fail: {must_fail}' names no probe of {task.name} (its probes: "
                              f"{'; '.join(probe.name for probe in task.probes)})")
        if any(m.label == header["mutant"].strip() for m in found):
            raise CourseError(f"{path}: another mutant of {task.name} is also '# mutant: {header['mutant'].strip()}': "
                              f"give each its own description")
        leading = [line.strip() for line in itertools.takewhile(lambda line: line.startswith("#"), source.splitlines())]
        _no_misspelt_marks(path, leading)
        found.append(Mutant(header["mutant"].strip(), source, must_fail, str(path), stub="# stub" in leading,
                            says=header.get("says", "").strip() or header["mutant"].strip()))
    return tuple(found)


MUTANT_KEYS = ("# mutant:", "# must fail:", "# says:")  # a mutant's leading comments, each followed by its text
MUTANT_FLAGS = ("# stub", ERROR_NAMES, KEEPS_STATE)  # and those that are a line alone


def _no_misspelt_marks(path: Path, leading: list[str]) -> None:
    """A leading comment that is nearly one of a mutant's marks ("# Must fail:", "# its error name it") would be
    read as a plain comment, its rule left out without a word: refused with the mark it may have meant."""
    for line in leading:
        head = line.split(":", 1)[0] + ":" if ":" in line else line
        if head in MUTANT_KEYS or line in MUTANT_FLAGS:
            continue
        close = difflib.get_close_matches(head.lower(), MUTANT_KEYS, n=1, cutoff=0.8) or \
            difflib.get_close_matches(line.lower(), MUTANT_FLAGS, n=1, cutoff=0.8)
        if close:
            raise CourseError(f"{path}: {line!r} is nearly {close[0]!r}, which is read only as written (lower case, "
                              f"one space): write it so, or reword the comment")


def public_tests(path: Path, module: ModuleType) -> tuple[str, ...]:
    """The test_ functions of public_checks.py, each with the module's UPPER_CASE constants written in."""
    tree = ast.parse(path.read_text())
    tests = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            tests.append(ast.unparse(_Inline(module, path).visit(node)))
    if not tests:
        raise CourseError(f"{path}: no test_ function")
    return tuple(tests)


class _Inline(ast.NodeTransformer):
    """UPPER_CASE module names -> their values as literals (lists, numbers, strings)."""

    def __init__(self, module: ModuleType, path: Path):
        self.module, self.path = module, path

    def visit_Name(self, node: ast.Name):
        if node.id.isupper() and hasattr(self.module, node.id):
            value = getattr(self.module, node.id)
            try:
                literal = ast.parse(repr(value), mode="eval").body
                ast.literal_eval(literal)
            except (SyntaxError, ValueError) as err:
                raise CourseError(f"{self.path}: {node.id} is not a plain literal (use .tolist())") from err
            return ast.copy_location(literal, node)
        return node


def _task(folder: Path, module_name: str) -> Task:
    path = folder / "task.py"
    module = load_module(path, module_name)
    task = _attribute(module, "TASK", path)
    if task.name != folder.name:
        raise CourseError(f"{path}: the task is called {task.name!r} but its folder {folder.name!r}")
    example = module.example() if hasattr(module, "example") else ""
    starter = _python(folder / "solution.py")
    if not re.search(r"^ *# BEGIN SOLUTION\n(.*\n)?^ *# END SOLUTION$", starter, flags=re.M | re.S):
        raise CourseError(f"{folder / 'solution.py'}: no body between `# BEGIN SOLUTION` and `# END SOLUTION` (each a "
                          "line of its own, in that order): students get this file without what lies between them, so "
                          "without the markers they would get the whole solution")
    _probes_fit_the_signature(task, path, folder / "solution.py", starter)
    checks_path = folder / "public_checks.py"
    checks = load_module(checks_path, module_name + "_public")
    return replace(task, prompt=_read(folder / "prompt.md"), starter=starter, example=example,
                   public_checks=public_tests(checks_path, checks), substitute=_python(folder / "substitute.py", False),
                   mutants=_mutants(folder, task))


def _probes_fit_the_signature(task: Task, path: Path, solution: Path, starter: str) -> None:
    """solution.py defines the task's function at the top level, and every probe passes it parameters it
    takes, the required ones in its order (the grader passes those by position, to the student and the
    reference alike: a swapped pair would be graded consistently, on inputs the prompt never meant)."""
    defined = {node.name: node for node in ast.parse(starter).body if isinstance(node, ast.FunctionDef)}
    if task.function not in defined:
        raise CourseError(f"{solution}: defines no top-level `def {task.function}(...)`, the function {path.name} names "
                          f"(function={task.function!r}; solution.py defines {', '.join(defined) or 'no function'}): make "
                          "the two agree")
    signature = defined[task.function].args
    required = [a.arg for a in (signature.posonlyargs + signature.args)[: len(signature.posonlyargs + signature.args) - len(signature.defaults)]]
    taken = [a.arg for a in signature.posonlyargs + signature.args + signature.kwonlyargs]
    for probe in task.probes:
        names = [arg.name for arg in probe.args]
        unknown = [name for name in names if name not in taken]
        if unknown and signature.kwarg is None:
            raise CourseError(f"{path}: probe {probe.name!r} passes {unknown[0]!r}, which {task.function}({', '.join(taken)}) "
                              f"in solution.py does not take")
        in_order = [name for name in names if name in required]
        if in_order != [name for name in required if name in names]:
            raise CourseError(f"{path}: probe {probe.name!r} passes {', '.join(in_order)} in another order than "
                              f"{task.function}({', '.join(required)}) takes them: list args in the signature's order")


def _unit(folder: Path, module_name: str) -> Question | Task:
    """A unit folder, loaded by its kind: question.py makes a question, task.py a task."""
    if not folder.is_dir():
        raise CourseError(f"{folder}: missing (assignment.py lists the unit {folder.name!r}: make its folder, or "
                          f"remove it from units)")
    found = [name for name in UNIT_FILES if (folder / name).is_file()]
    if len(found) != 1:
        what = "both" if found else "neither"
        raise CourseError(f"{folder}: a unit folder holds question.py (a question) or task.py (a function task); "
                          f"this one has {what}")
    _no_strays(folder, FOLDER_FILES[found[0]], f"a {found[0][:-3]} unit's folder")
    if (folder / "mutants").is_dir():
        _no_strays(folder / "mutants", (), "mutants/", lambda path: path.suffix == ".py")
    return (_question if found == ["question.py"] else _task)(folder, module_name)


def _no_strays(folder: Path, known: tuple[str, ...], what: str, fits=lambda path: False) -> None:
    """Every entry of ``folder`` is one the build reads (dotfiles and __pycache__ aside): a misspelt or stray
    file is refused with the name it may have meant, never left out silently."""
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name == "__pycache__" or path.name in known or fits(path):
            continue
        close = difflib.get_close_matches(path.name, known, n=1)
        reads = ", ".join(known) if known else "*.py (each a mutant)"
        raise CourseError(f"{path}: the build does not read this file ({what} holds {reads}), so it would be left out "
                          f"without a word{f'; did you mean {close[0]}?' if close else ''}: rename it, or keep it outside "
                          "the course")


def _reference(spec: str, folder: Path, where: str) -> tuple[str, Path | None]:
    """Resolve "module:function" now (a misspelt reference fails the build, not the grading)."""
    module_name, _, function = spec.partition(":")
    if not module_name or not function:
        raise CourseError(f"{where}: reference {spec!r} is not 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise CourseError(f"{where}: reference {spec!r}: {err}") from None
    if not callable(getattr(module, function, None)):
        raise CourseError(f"{where}: reference {spec!r}: {module_name} has no function {function}")
    if module_name.split(".")[0] == "attn_ref":
        return module_name, None  # bundled with the grader
    file = Path(module.__file__).resolve()
    if folder.resolve() not in file.parents or file.name == "__init__.py":
        raise CourseError(f"{where}: reference {spec!r} must be attn_ref's or a single .py file in {folder}")
    _grader_can_import(file)
    _runs_alone(file)
    return module_name, file


REFERENCE_IMPORTS = frozenset(sys.stdlib_module_names) | {"numpy", "attn_ref"}  # the grader's environment: no torch


def _grader_can_import(file: Path) -> None:
    """A custom reference runs in the grader's process, which has the standard library, NumPy and attn_ref
    (never torch): an import of anything else would fail at grading time, so it fails the build now."""
    for node in ast.walk(ast.parse(file.read_text(), filename=str(file))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
        for name in names:
            if name.split(".")[0] not in REFERENCE_IMPORTS:
                raise CourseError(f"{file}, line {node.lineno}: imports {name}, which the grader does not have: a "
                                  f"reference uses only the standard library and NumPy (write the torch version in "
                                  f"the solution, and the reference in NumPy)")


def _runs_alone(file: Path) -> None:
    """The grader executes the reference's bytes alone, as references/<file> of the zip, in a module of its own:
    no __file__, no folder of the course beside it. Run so here, a reference that reads a file next to it
    fails the build with its line, not every grading with the grader's traceback."""
    module = ModuleType(f"_reference_alone_{file.stem}")
    try:
        exec(compile(file.read_bytes(), str(file), "exec"), module.__dict__)  # noqa: S102 - the instructor's reference
    except Exception as err:  # noqa: BLE001 - whatever it raises, named with its line
        raise CourseError(f"{file}{_line_in(file, err)}: {type(err).__name__}: {err} (the grader runs this file alone, as "
                          f"references/{file.name} in the zip: no __file__, no other file of the course)") from None


def _check_layout(layout: Layout, layout_path: Path, name: str) -> None:
    if not layout.units:
        raise CourseError(f"{layout_path}: units=() lists no unit; add one with `attn-ref new {name} --task NAME` "
                          "(a function) or `--question NAME` (numbers)")
    twice = sorted({unit for unit in layout.units if list(layout.units).count(unit) > 1})
    if twice:
        raise CourseError(f"{layout_path}: units lists {twice[0]!r} twice; a unit is one place in the notebook "
                          "(a later task that calls it names it in builds_on)")
    if layout.visibility not in VISIBILITIES:
        raise CourseError(f"{layout_path}: visibility {layout.visibility!r} is not one of {', '.join(VISIBILITIES)}")
    unlisted = sorted(path.name for path in layout_path.parent.iterdir() if path.is_dir() and path.name not in layout.units
                      and any((path / f).is_file() for f in ("question.py", "task.py")))
    if unlisted:
        raise CourseError(f"{layout_path}: {unlisted[0]}/ holds a unit that units= does not list, so the build would "
                          f"leave it out without a word: add {unlisted[0]!r} to units, or move the folder out of "
                          f"{layout_path.parent.name}/ while it is a draft")


def _prompts_name_their_functions(folder: Path, tasks: list[Task]) -> None:
    """A prompt that calls a function by nearly its task's name (`addtive_attention(`) is a misspelling: students
    would write the name they read, and the grader finds none (the assignment's other functions are not counted)."""
    functions = {t.function for t in tasks}
    for task in tasks:
        for called in sorted(set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)\(", task.prompt)) - functions):
            if difflib.SequenceMatcher(None, called, task.function).ratio() >= 0.8:
                raise CourseError(f"{folder / task.name / 'prompt.md'}: calls `{called}(…)`, nearly the task's function "
                                  f"`{task.function}` (task.py, solution.py): students write the name they read, and the "
                                  "grader looks for the task's; fix the spelling")


def load_assignment(course: Path, entry: Entry) -> Assignment:
    folder = (Path(course) / entry.folder).resolve()
    layout_path = folder / "assignment.py"
    with _importable(folder):
        layout = _attribute(load_module(layout_path, f"_course_{entry.name}"), "ASSIGNMENT", layout_path)
        _check_layout(layout, layout_path, entry.name)
        units = [_unit(folder / unit, f"_course_{entry.name}_{unit}") for unit in layout.units]
        if any(isinstance(u, Question) and u.parameters for u in units) and not layout.variant_key:
            raise CourseError(f"{layout_path}: questions with parameters need variant_key=\"<course> <term>\" in the "
                              "Layout (it decides which student gets which numbers; change it every term)")
        _prompts_name_their_functions(folder, [u for u in units if isinstance(u, Task)])
        references = {}
        tasks = [u.name for u in units if isinstance(u, Task)]
        for task in (u for u in units if isinstance(u, Task)):
            name, file = _reference(task.reference, folder, str(folder / task.name / "task.py"))
            references[name] = file
            for earlier in task.builds_on:
                if earlier not in tasks[: tasks.index(task.name)]:
                    raise CourseError(f"{folder / task.name / 'task.py'}: builds_on {earlier!r}, which is not an earlier "
                                      f"task of the layout")
    exploration = tuple((_read(folder / name), name in layout.timing) for name in layout.exploration)
    return Assignment(entry.name, entry.title, folder, layout, _read(folder / "intro.md"), tuple(units),
                      setup=_read(folder / layout.setup) if layout.setup else "",
                      exploration_intro=_read(folder / layout.exploration_intro) if layout.exploration_intro else "",
                      exploration=exploration, references=tuple(sorted(references.items())),
                      outro=_read(folder / "outro.md", required=False))


def load_course(course: Path, only: str | None = None) -> list[Assignment]:
    entries = load_registry(course)
    if only is not None and only not in {e.name for e in entries}:
        raise CourseError(f"no assignment {only!r} in {Path(course) / 'registry.py'} (it has {', '.join(e.name for e in entries)})")
    return [load_assignment(course, e) for e in entries if only is None or e.name == only]
