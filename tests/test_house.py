"""The house's rules, read from the code's own imports: each room imports only what its ``__init__`` says it
may (where the code runs decides it), and imports between rooms run one way (no room imports one above it)."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

from attn_ref.grade.session import KERNEL_MODULES, SENT_WITH_HARNESS

PACKAGE = Path(__file__).resolve().parents[1] / "attn_ref"
STDLIB = frozenset(sys.stdlib_module_names) | {"__main__"}
MATHS = ("attn_ref._arrays", "attn_ref.attention", "attn_ref.chunked", "attn_ref.costs", "attn_ref.decoding",
         "attn_ref.masks", "attn_ref.recurrence")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def imports() -> dict[str, set[str]]:
    """{module: every module or package it imports, at any depth of its code}, relative imports resolved."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:  # `from . import x` imports the module x where there is one
                    sub = f"{module}.{alias.name}"
                    targets.add(sub if sub in modules() else module)
        found[name] = targets
    return found


@cache
def modules() -> frozenset[str]:
    return frozenset(module_name(p) for p in PACKAGE.rglob("*.py"))


def room(module: str) -> str:
    """A folder of attn_ref.grade (or attn_ref.portable, or the release) is one room; any other file is its own."""
    parts = module.split(".")
    if parts[:2] in (["attn_ref", "portable"], ["attn_ref", "release"]):
        return ".".join(parts[:2])
    if parts[:2] == ["attn_ref", "grade"] and len(parts) > 3:
        return ".".join(parts[:3])
    if module in MATHS:
        return "attn_ref (the reference's maths)"
    return module


# room: (third-party top-level packages it may import, attn_ref rooms it may import besides its own)
RULES = {
    "attn_ref.portable": ({"matplotlib"}, set()),
    "attn_ref (the reference's maths)": ({"numpy", "torch", "array_api_compat"}, set()),
    "attn_ref.grade.inkernel": ({"numpy", "torch", "ipykernel"}, {"attn_ref.portable"}),
    "attn_ref.grade.student_python": ({"numpy", "torch", "ipykernel"}, set()),
    # the trust boundary for what students and exports hand in: the standard library, nbformat to write a
    # notebook again, PyYAML in the metadata's child process; nothing of the grader above it
    "attn_ref.grade.intake": ({"nbformat", "yaml"}, {"attn_ref.grade.inkernel"}),
}
# rooms that no room of the grader below them may import: (room, the rooms it stands above)
ABOVE = {
    "attn_ref.grade.isolation": {"attn_ref.grade.scoring", "attn_ref.grade.classroom", "attn_ref.grade.proofs",
                                 "attn_ref.grade.core", "attn_ref.grade.session", "attn_ref.grade.cli"},
    "attn_ref.grade.scoring": {"attn_ref.grade.classroom", "attn_ref.grade.proofs", "attn_ref.grade.core",
                               "attn_ref.grade.cli"},
    "attn_ref.grade.classroom": {"attn_ref.grade.proofs", "attn_ref.grade.cli"},
}


def siblings(module: str) -> set[str]:
    """student_python's files load each other by path, as top-level modules."""
    folder = PACKAGE.parent / Path(*module.split(".")[:-1])
    return {p.stem for p in folder.glob("*.py")}


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_room_imports_only_what_runs_where_it_runs(name):
    third_party, rooms = RULES[name]
    members = [m for m in imports() if room(m) == name]
    assert members, f"no module is in {name}"
    wrong = {}
    for module in members:
        for target in imports()[module]:
            top = target.split(".")[0]
            if top == "attn_ref":
                ok = room(target) == name and name != "attn_ref.portable" or room(target) in rooms
                ok = ok or (name == "attn_ref.portable" and target == "attn_ref.portable")
            else:
                ok = top in STDLIB or top in third_party or (name.endswith("student_python") and top in siblings(module))
            if not ok:
                wrong.setdefault(module, []).append(target)
    assert not wrong, f"{name} imports what its room may not: {wrong}"


@pytest.mark.parametrize("name", sorted(ABOVE))
def test_no_room_imports_one_above_it(name):
    wrong = {m: sorted(t for t in targets if room(t) in ABOVE[name]) for m, targets in imports().items() if room(m) == name}
    wrong = {m: targets for m, targets in wrong.items() if targets}
    assert not wrong, f"{name} imports a room above it: {wrong}"


def test_the_rooms_import_one_another_one_way():
    """No circle of rooms: every import runs from a higher floor to a lower one."""
    edges = {}
    for module, targets in imports().items():
        for target in targets:
            if target.startswith("attn_ref") and room(target) != room(module):
                edges.setdefault(room(module), set()).add(room(target))
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                raise AssertionError("rooms in a circle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_what_the_kernel_is_sent_is_every_module_the_harness_needs():
    """Each of attn_ref's modules a kernel module imports is sent before it, and the import line is marked to be
    dropped (the student environment has no attn_ref)."""
    for index, module in enumerate(KERNEL_MODULES):
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        lines = path.read_text().splitlines()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level:
                target = next(t for t in imports()[module] if t.endswith(node.module.split(".")[-1]))
                assert target in KERNEL_MODULES[:index], f"{module} imports {target}, which is not sent before it"
                assert lines[node.end_lineno - 1].endswith(SENT_WITH_HARNESS), f"{module}: {target} is not marked"
        assert room(module) in ("attn_ref.grade.inkernel", "attn_ref.portable"), f"{module} runs in the kernel"


TESTS = Path(__file__).resolve().parent
TEST_ROOMS = {"reference", "portable", "release", "end_to_end", "docs"}  # beside tests/grade/<room>/, one per room of the grader; docs/: the README and the guides


def test_the_tests_mirror_the_rooms():
    """A test lives in the folder of the room it tests (tests/grade/<room>/ for the grader's rooms, tests/grade/ for its
    single modules), or in end_to_end/."""
    grader_rooms = {p.name for p in (PACKAGE / "grade").iterdir() if (p / "__init__.py").exists()}
    misplaced = []
    for path in TESTS.rglob("test_*.py"):
        folder = path.parent.relative_to(TESTS).parts
        ok = (folder == () and path.name == "test_house.py" or len(folder) == 1 and folder[0] in TEST_ROOMS
              or folder == ("grade",) or len(folder) == 2 and folder[0] == "grade" and folder[1] in grader_rooms)
        if not ok:
            misplaced.append(str(path.relative_to(TESTS)))
    assert not misplaced, f"tests outside a room's folder: {misplaced}"


MAX_COMPLEXITY = 20  # radon's cyclomatic complexity of one function
# Each with why it stays: typerules.py is written into every released notebook's public tests (release/inline.py),
# so reshaping it changes what every student has; it is held to the limit of the notebook it lives in instead.
ABOVE_THE_LIMIT = {("attn_ref/portable/typerules.py", "describe"): 21}


def test_no_function_is_too_tangled_to_read():
    from radon.complexity import cc_visit

    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE.parent))
        for block in cc_visit(path.read_text()):
            key = (name, block.name)
            if block.complexity > ABOVE_THE_LIMIT.get(key, MAX_COMPLEXITY):
                found[f"{name}: {block.fullname}"] = block.complexity
    assert not found, f"above radon's complexity {MAX_COMPLEXITY}: {found}"


# raised and caught inside the students' interpreter (student_python/: the launcher's and the image's own
# "this cannot be done here, start afresh"), never reaching the grader's command line; and the kernel's boot
# script, which starts a kernel when it is imported
OWN_INTERPRETER = ("attn_ref.grade.student_python.", "attn_ref.grade.inkernel.boot")


def test_each_side_has_one_exception_base():
    """Every exception the package defines derives from GraderError (the grader) or ReleaseError (the
    release builder), so the command line catches each side once and prints its message."""
    import importlib

    from attn_ref.grade.inkernel.errors import GraderError
    from attn_ref.release.errors import ReleaseError

    strays = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        classes = [node.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)]
        if name.startswith(OWN_INTERPRETER) or not classes:
            continue
        module = importlib.import_module(name)
        for cls in (getattr(module, c, None) for c in classes):
            if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in (GraderError, ReleaseError):
                base = GraderError if name.startswith("attn_ref.grade") else ReleaseError
                if not issubclass(cls, base):
                    strays.append(f"{name}.{cls.__name__} (not a {base.__name__})")
    assert not strays, strays


def test_the_tests_use_no_private_name_of_the_package():
    """A test of attn_ref imports what its modules offer, so a module may rename what it keeps to itself;
    what a test needs is public (named without a leading underscore)."""
    found = []
    for path in sorted(PACKAGE.parent.joinpath("tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attn_ref"):
                found += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, f"private names imported by tests: {found}"
