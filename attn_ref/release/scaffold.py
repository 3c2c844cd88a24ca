"""`attn-ref new`: a new assignment, function task or numeric question, copied from the templates beside this
file (attn_ref/release/templates/) and entered where the loader looks for it: the assignment's line in the
course's registry.py, the unit's name in its assignment.py's ``units``.

Nothing is overwritten and nothing is half made: every file and edit is planned first, and any refusal (an
existing file, a registry or layout that cannot be edited mechanically) comes before anything is written.
An edit is made only where the file holds a plain literal (``ASSIGNMENTS = (Entry(...), ...)``,
``units=("c1", ...)``), and is checked by parsing the result; anywhere else the message gives the line to add
by hand, after which the same command makes the rest. Like the builder, this knows nothing of grading.
"""

from __future__ import annotations

import ast
import json
import keyword
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .course import CourseError, load_module, load_registry
from .errors import ReleaseError

TEMPLATES = Path(__file__).resolve().parent / "templates"
NAME = re.compile(r"[a-z][a-z0-9_]*\Z")  # a Python name, a file name and a Gradescope question name alike
KINDS = ("task", "question")


@dataclass(frozen=True)
class Plan:
    """What one `attn-ref new` writes: new files and the new texts of edited files, each with its path."""

    course: Path
    created: dict[Path, str]
    edited: dict[Path, tuple[str, str]]  # path: (its new text, what was added, in words)

    def write(self) -> None:
        """Every new file (refusing, even now, one that appeared since the plan), then every edit."""
        for path, text in sorted(self.created.items()):
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as file:
                file.write(text)
        for path, (text, _) in sorted(self.edited.items()):
            _replace(path, text)

    def summary(self) -> list[str]:
        """One line per file, paths whole and relative to the course, in a fixed order."""
        lines = [f"created {path.relative_to(self.course)}" for path in sorted(self.created)]
        return lines + [f"edited  {path.relative_to(self.course)}: {what}" for path, (_, what) in sorted(self.edited.items())]


def _replace(path: Path, text: str) -> None:
    """Write ``text`` over ``path`` at once (a temporary file beside it, renamed), keeping its mode."""
    mode = path.stat().st_mode & 0o7777
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _checked_name(what: str, name: str) -> str:
    if not NAME.match(name) or keyword.iskeyword(name):
        raise CourseError(f"{what} {name!r}: use lower-case letters, digits and underscores, starting with a letter "
                          "(it names folders, files and Python variables), as week32, c1 or q1 do")
    return name


def _render(template: str, words: dict[str, str]) -> dict[Path, str]:
    """{relative path: text} of one template folder, its words replaced in paths and texts in one pass (a
    replacement is never read again), the longest word first: TEMPLATE_UNIT_ref is TEMPLATE_UNIT's "_ref"."""
    pattern = re.compile("|".join(sorted(map(re.escape, words), key=len, reverse=True)))

    def filled(text: str) -> str:
        return pattern.sub(lambda match: words[match.group()], text)

    root = TEMPLATES / template
    return {Path(filled(str(path.relative_to(root)))): filled(path.read_text(encoding="utf-8"))
            for path in sorted(root.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


# ---- edits of a literal sequence, located by ast ------------------------------------------------------------

class _Uneditable(ReleaseError):
    """Why a file's sequence cannot be extended mechanically (never leaves this module: said as a CourseError,
    with the file and the line to add by hand)."""


def _offset(source: str, line: int, column: int) -> int:
    """ast's (line, UTF-8 byte column) as an index into ``source``."""
    lines = source.splitlines(keepends=True)
    start = sum(len(text) for text in lines[: line - 1])
    return start + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8"))


def _top_level_value(tree: ast.Module, target: str) -> ast.expr:
    found = [node.value for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id == target]
    if len(found) != 1:
        raise _Uneditable(f"{'no' if not found else 'more than one'} top-level `{target} = ...`")
    return found[0]


def _registry_sequence(tree: ast.Module) -> ast.expr:
    value = _top_level_value(tree, "ASSIGNMENTS")
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    if "Entry" not in imported:
        raise _Uneditable("it does not import Entry (from attn_ref.release.course import Entry)")
    return value


def _units_sequence(tree: ast.Module) -> ast.expr:
    value = _top_level_value(tree, "ASSIGNMENT")
    if not isinstance(value, ast.Call):
        raise _Uneditable("`ASSIGNMENT = ...` is not a call of Layout(...)")
    units = [k.value for k in value.keywords if k.arg == "units"]
    if len(units) != 1:
        raise _Uneditable("Layout(...) has no `units=` keyword")
    if isinstance(units[0], (ast.Tuple, ast.List)) and not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in units[0].elts):
        raise _Uneditable("`units=` holds something other than quoted names")
    return units[0]


def _appended(source: str, locate, element: str) -> str:
    """``source`` with ``element`` (Python source) added at the end of the bracketed tuple or list that
    ``locate(tree)`` finds, in the layout it has: one element a line (its indent, after a comment that ends
    the last line) or all on one line. Raises _Uneditable where the sequence is anything else, or where the
    result does not parse into the same elements and one more."""
    try:
        before = locate(ast.parse(source))
    except SyntaxError as err:
        raise _Uneditable(f"line {err.lineno}: {err.msg}") from None
    if not isinstance(before, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in before.elts):
        raise _Uneditable("its value is not a written-out tuple or list")
    start = _offset(source, before.lineno, before.col_offset)
    end = _offset(source, before.end_lineno, before.end_col_offset)
    if source[start] not in "([" or source[end - 1] not in ")]":
        raise _Uneditable("the tuple has no brackets around it")
    if not before.elts:
        new = _into_empty(source, start, end, element + ("," if isinstance(before, ast.Tuple) else ""))
    else:
        new = _after_last(source, before.elts[-1], end - 1, element)
    _same_and_one_more(before, new, locate, element)
    return new


def _into_empty(source: str, start: int, end: int, element: str) -> str:
    """``()`` gives ``(element)``; brackets on lines of their own give the element a line between them, indented
    one step past the line the sequence opens on (anything between the brackets, a comment, stays)."""
    newline = source.rfind("\n", start, end)
    if newline < 0:
        return source[: start + 1] + element + source[end - 1:]
    opening = source[source.rfind("\n", 0, start) + 1:]
    indent = " " * (len(opening) - len(opening.lstrip(" ")) + 4)
    return source[:newline] + f"\n{indent}{element}" + source[newline:]


def _after_last(source: str, last: ast.expr, close: int, element: str) -> str:
    """A new line after the last element's line, at its indent, where the elements end their lines; else
    ", element" after the last (any trailing comma dropped: the brackets close on that line)."""
    last_end = _offset(source, last.end_lineno, last.end_col_offset)
    if "\n" not in source[last_end:close]:
        return source[:last_end] + f", {element}" + source[close:]
    after = last_end + re.match(r"[ \t]*,?", source[last_end:]).end()
    line_end = source.index("\n", after)
    if source[after:line_end].strip() and not source[after:line_end].strip().startswith("#"):
        raise _Uneditable("something follows the last entry on its line")
    line_start = source.rfind("\n", 0, _offset(source, last.lineno, last.col_offset)) + 1
    indent = re.match(r"[ \t]*", source[line_start:]).group()
    comma = "" if source[last_end:after].strip() == "," else ","
    return source[:last_end] + comma + source[last_end:line_end] + f"\n{indent}{element}," + source[line_end:]


def _same_and_one_more(before: ast.expr, new: str, locate, element: str) -> None:
    try:
        after = locate(ast.parse(new))
    except (SyntaxError, _Uneditable):
        raise _Uneditable("the edited file would not parse") from None
    dump = ast.dump
    expected = [dump(e) for e in before.elts] + [dump(ast.parse(element, mode="eval").body)]
    if not isinstance(after, type(before)) or [dump(e) for e in after.elts] != expected:
        raise _Uneditable("the edit would not give the same entries and one more")


# ---- the plan -------------------------------------------------------------------------------------------

def _refuse_existing(paths, what: str) -> None:
    existing = sorted(str(p) for p in paths if p.exists())
    if existing:
        raise CourseError(f"{what}: {', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; nothing "
                          f"was written (choose another name, or move those away)")


def _edit(path: Path, locate, element: str, added: str, by_hand: str) -> tuple[str, str]:
    source = path.read_text(encoding="utf-8")
    try:
        return _appended(source, locate, element), added
    except _Uneditable as why:
        raise CourseError(f"{path}: cannot add {added} mechanically ({why}); nothing was written. {by_hand}, then run "
                          f"the same command again") from None


def _checked_arguments(assignment: str, kind: str | None, unit: str | None, function: str | None,
                       title: str | None) -> None:
    _checked_name("assignment", assignment)
    if kind is not None and kind not in KINDS:
        raise CourseError(f"unit kind {kind!r}: one of {', '.join(KINDS)}")
    if kind is not None:
        _checked_name(kind, unit or "")
    if function is not None and kind != "task":
        raise CourseError("--function names a task's function: give it with --task NAME")
    if title is not None and (not title.strip() or not title.isprintable()):
        raise CourseError(f"title {title!r}: one line of printable text")


def plan(course: Path, assignment: str, kind: str | None = None, unit: str | None = None, function: str | None = None,
         title: str | None = None) -> Plan:
    """What `attn-ref new` writes for ``assignment`` (made, with its registry line, where the registry lacks it)
    and, with ``kind`` ("task" or "question"), a unit ``unit`` in it. Raises CourseError, naming the file, for a
    bad name, anything that exists already, or a file it cannot edit."""
    course = Path(course).resolve()
    _checked_arguments(assignment, kind, unit, function, title)
    registry = course / "registry.py"
    entry = {e.name: e for e in load_registry(course)}.get(assignment) if registry.exists() else None
    if entry is not None and title is not None:
        raise CourseError(f"--title is a new assignment's: {registry} has {assignment!r} already (its title is in its line)")
    folder = course / (entry.folder if entry else assignment)
    words = {"TEMPLATE_ASSIGNMENT": assignment, "TEMPLATE_TITLE": (title or assignment).strip()}
    created: dict[Path, str] = {}
    edited: dict[Path, tuple[str, str]] = {}
    if entry is None:
        _plan_entry(registry, folder, assignment, words, created, edited)
    if not folder.exists():
        created.update({folder / path: text for path, text in _render("assignment", words).items()})
    elif kind is None:
        raise CourseError(f"{folder}: assignment {assignment!r} exists already; add a unit to it with "
                          f"`attn-ref new {assignment} --task NAME` or `--question NAME`")
    if kind is not None:
        _plan_unit(folder, kind, unit, function or unit, {**words, "TEMPLATE_UNIT": unit}, created, edited)
    return Plan(course, created, edited)


def _plan_entry(registry: Path, folder: Path, assignment: str, words: dict, created: dict, edited: dict) -> None:
    """The assignment's line in the registry: added to it, or to a new one made from the course template."""
    title = json.dumps(words["TEMPLATE_TITLE"], ensure_ascii=False)  # a JSON string is a Python string literal
    line = f"Entry(name={json.dumps(assignment)}, title={title}, folder={json.dumps(assignment)})"
    if folder.exists():
        raise CourseError(f"{folder} exists but {registry} has no assignment {assignment!r}: add `{line}` to "
                          f"ASSIGNMENTS by hand (the folder's files are yours: nothing was written)")
    if registry.exists():
        edited[registry] = _edit(registry, _registry_sequence, line, f"the line {line}", f"Add `{line}` to ASSIGNMENTS")
    else:
        created[registry] = _appended(_render("course", words)[Path("registry.py")], _registry_sequence, line)


def _plan_unit(folder: Path, kind: str, unit: str, function: str, words: dict, created: dict, edited: dict) -> None:
    _checked_name("function", function)
    files = {folder / path: text for path, text in _render(kind, {**words, "TEMPLATE_FUNCTION": function}).items()}
    _refuse_existing([folder / unit, *(p for p in files if p.parent == folder)], f"{kind} {unit!r}")
    created.update(files)
    layout = folder / "assignment.py"
    if layout in created:  # the assignment is new too: its units are this one
        created[layout] = _appended(created[layout], _units_sequence, json.dumps(unit))
        return
    if unit not in _listed_units(layout):
        edited[layout] = _edit(layout, _units_sequence, json.dumps(unit), f"{unit!r} to units",
                               f"Add {json.dumps(unit)} to `units=` in {layout}")


def _listed_units(layout: Path) -> tuple[str, ...]:
    """The units assignment.py lists: read from its literal, else from running it (as the build does)."""
    if not layout.is_file():
        raise CourseError(f"{layout}: missing (an assignment's folder holds assignment.py: ASSIGNMENT = Layout(units=...))")
    try:
        units = _units_sequence(ast.parse(layout.read_text(encoding="utf-8")))
        if isinstance(units, (ast.Tuple, ast.List)):
            return tuple(e.value for e in units.elts)
    except (SyntaxError, _Uneditable):
        pass
    units = getattr(getattr(load_module(layout, "_scaffold_layout"), "ASSIGNMENT", None), "units", None)
    if units is None:
        raise CourseError(f"{layout}: defines no ASSIGNMENT = Layout(units=...)")
    return tuple(units)


def new(course: Path, assignment: str, kind: str | None = None, unit: str | None = None, function: str | None = None,
        title: str | None = None) -> list[str]:
    """Plan, then write; returns the lines that say what was made (see ``plan``)."""
    made = plan(course, assignment, kind, unit, function, title)
    made.write()
    return made.summary()
