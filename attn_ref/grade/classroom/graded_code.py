"""The code the integrity report compares for one unit: what grading runs, not what a cell looks like.

A task's code is the definition its graded name is bound to when the notebook has run (the last one, in any cell;
through an alias: ``softmax = _x_softmax``), with the notebook's own functions it calls, and theirs; a question's
is the last assignment of each of its answers. Each is written again by ``ast.unparse``: comments, docstrings,
blank lines and layout go, before any length cap, so padding, a comment first in a cell, renaming through an
alias or reordering cells change nothing. A cell that does not parse is read as before, by a pattern within a
line, with its comment lines removed first.
"""

from __future__ import annotations

import ast
import copy
import re

from ..checks_json import FunctionUnit, QuestionUnit, Unit

MAX_CODE = 20_000  # characters of a unit's code compared: far above any honest answer, and bounds the work
MAX_FUNCTIONS = 50  # the notebook's functions followed from one task's (its helpers, theirs...)
_COMMENT_LINE = re.compile(r"^[ \t]*#[^\n]*\n?", re.M)


class GradedCode:
    """A notebook's code cells, parsed once, and each unit's code from them (``of``)."""

    def __init__(self, nb):
        """``nb``: anything with ``cells`` of ``cell_type`` and ``source``."""
        self.trees, self.unparsed = [], []
        for source in (c.source for c in nb.cells if c.cell_type == "code"):
            try:
                self.trees.append(ast.parse(source))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.unparsed.append(_COMMENT_LINE.sub("", source))
        self.bound = _definitions(self.trees)

    def of(self, unit: Unit) -> str:
        """The code a submission wrote for one unit (above), at most MAX_CODE characters; "" where it wrote none."""
        if isinstance(unit, FunctionUnit):
            found = _function_code(self.bound, unit.function)
            pattern = rf"^[ \t]*def[ \t]+{re.escape(unit.function)}[ \t]*\("
        elif isinstance(unit, QuestionUnit):
            found = _answer_code(self.trees, [a.name for a in unit.answers])
            pattern = rf"^[ \t]*({'|'.join(re.escape(a.name) for a in unit.answers)})[ \t]*="
        else:
            return ""
        # patterns match within a line only ([ \t], never \s): ^\s* across a cell of blank lines is quadratic
        found += [s for s in self.unparsed if re.search(pattern, s, re.M)]
        return "\n\n".join(found)[:MAX_CODE]


def unit_code(nb, unit: Unit) -> str:
    """One unit's code of a notebook (GradedCode)."""
    return GradedCode(nb).of(unit)


def starter_code(unit: Unit) -> str:
    """A unit's starter written as unit_code writes code (its lines then match a student's copy of them)."""
    try:
        tree = ast.parse(unit.starter or "")
    except (SyntaxError, ValueError):
        return unit.starter or ""
    return "\n\n".join(_written(node) for node in tree.body)


def _definitions(trees: list[ast.Module]) -> dict[str, ast.AST]:
    """Each top-level name bound to a function (a def, a lambda, or another such name), the last binding in
    the notebook's order, as running it leaves them."""
    bound: dict[str, ast.AST] = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[node.name] = node
            elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Lambda)):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bound[target.id] = node.value if isinstance(node.value, ast.Lambda) else ast.Name(node.value.id)
    return bound


def _resolve(bound: dict[str, ast.AST], name: str) -> ast.AST | None:
    """What a name is bound to in the end, through aliases (a = b; b = c), or None."""
    seen = set()
    node = bound.get(name)
    while isinstance(node, ast.Name) and node.id not in seen:
        seen.add(node.id)
        node = bound.get(node.id)
    return None if isinstance(node, ast.Name) else node


def _function_code(bound: dict[str, ast.AST], function: str) -> list[str]:
    """The graded function's definition and the notebook's functions it calls, transitively, each once."""
    order, queue, done = [], [function], set()
    while queue and len(order) < MAX_FUNCTIONS:
        node = _resolve(bound, queue.pop(0))
        if node is None or id(node) in done:
            continue
        done.add(id(node))
        order.append(node)
        queue += sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in bound})
    return [_written(node, function if i == 0 else None) for i, node in enumerate(order)]


def _answer_code(trees: list[ast.Module], names: list[str]) -> list[str]:
    """The last top-level statement assigning each answer, in the answers' order."""
    last: dict[str, ast.AST] = {}
    for tree in trees:
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in names:
                    last[target.id] = node
    return [_written(last[name]) for name in names if name in last]


def _written(node: ast.AST, name: str | None = None) -> str:
    """The node as code again, without its docstrings; a function bound to ``name`` is shown under that name."""
    try:
        if isinstance(node, ast.Lambda):
            return f"{name or '_'} = {ast.unparse(node)}"
        node = _DocstringsOut().visit(copy.deepcopy(node))
        if name and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.name = name
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return ""


class _DocstringsOut(ast.NodeTransformer):
    """Removes the docstring of every function, class and module body (a body left empty gets ``...``)."""

    def _strip(self, node):
        self.generic_visit(node)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Expr(ast.Constant(...))]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Module = _strip
