"""Static checks on the submitted code, parsed once: forbidden calls a task's function reaches, uses of the
grader's reference, and integrity flags for TAs.

Forbidden calls are matched as op *families* (every overload and fused kernel of scaled dot-product or
multi-head attention), in attribute chains rooted at torch (any alias: ``F``, ``nn``, ``torch.ops``,
``torch._C``), in constant strings handed to ``getattr`` or an op lookup, and through anything bound
at module level (assignments, lambdas, ``functools.partial``, containers, classes, helper functions),
last binding wins as in the kernel. The student's own names are never flagged: c3's function is itself
called ``scaled_dot_product_attention``. Code in cell magics (``%%capture``) is parsed too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Imported once, in the supervisor, before it forks the grading processes.

# normalised (lower case, no underscores) family -> the contract's name for it
FAMILIES = {
    "scaleddotproduct": "torch.nn.functional.scaled_dot_product_attention",
    "multiheadattention": "torch.nn.MultiheadAttention",
    "flashattention": "torch.nn.functional.scaled_dot_product_attention",
    "efficientattention": "torch.nn.functional.scaled_dot_product_attention",
    "cudnnattention": "torch.nn.functional.scaled_dot_product_attention",
}
LOOKUPS = {"getattr", "attrgetter", "__getattr__", "__getattribute__", "_get_operation_overload", "_jit_get_operation",
           "get", "__getitem__", "_get_schema", "lookup", "import_module", "__import__"}
REFERENCE = "attn_ref"


def python_source(cell_source: str) -> str:
    """The cell as Python after IPython's own transforms (`%timeit`, `!ls`, `%%capture` become calls). A cell
    that is Python already has nothing to transform (magics, shell escapes, `?` and prompts are not Python),
    so IPython, a fifth of the grader's start-up, is imported only for a cell that needs it."""
    try:
        ast.parse(cell_source)
        return cell_source
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001
        return cell_source


def _parse(source: str, depth: int = 0) -> list[ast.Module]:
    """The cell as Python, plus the code of any cell magic in it (``%%capture``), parsed."""
    try:
        tree = ast.parse(python_source(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    trees = [tree]
    if depth < 2:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and _dotted(node.func).endswith("run_cell_magic") and len(node.args) >= 3
                    and isinstance(node.args[2], ast.Constant) and isinstance(node.args[2].value, str)):
                trees += _parse(node.args[2].value, depth + 1)
    return trees


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))


def _family(text: str) -> str | None:
    key = text.lower().replace("_", "").replace(" ", "")
    return next((family for family in FAMILIES if family in key), None)


def _const_str(node: ast.AST) -> str | None:
    """A string the code spells out: a constant, constants joined with +, an f-string of constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_str(node.left), _const_str(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [_const_str(v) for v in node.values]
        return None if None in parts else "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" and node.args:
        items = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else []
        parts = [_const_str(v) for v in items]
        glue = _const_str(node.func.value)
        return None if None in parts or glue is None or not items else glue.join(parts)
    return None


@dataclass
class _Binding:
    """What a module-level name refers to at the end of the notebook (the last binding wins)."""

    node: ast.AST | None  # a def or class, an assigned value, or None (an import, a loop variable)
    imported: str = ""  # the dotted path an import bound it to


@dataclass
class Analysis:
    forbidden: dict[str, list[str]] = field(default_factory=dict)  # task -> contract names it reaches
    uses_reference: bool = False
    flags: list[str] = field(default_factory=list)


def _stored_names(nodes) -> list[str]:
    return [name.id for node in nodes for name in ast.walk(node) if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)]


def _bound_names(stmt: ast.stmt) -> list[tuple[str, _Binding]]:
    """The module-level names one statement binds, in order, with what each is bound to."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(stmt.name, _Binding(stmt))]
    if isinstance(stmt, ast.Import):
        return [(alias.asname, _Binding(None, alias.name)) if alias.asname
                else (alias.name.split(".")[0], _Binding(None, alias.name.split(".")[0])) for alias in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [(alias.asname or alias.name, _Binding(None, f"{stmt.module or ''}.{alias.name}")) for alias in stmt.names]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [(name, _Binding(stmt.value)) for name in _stored_names(targets)]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [(name, _Binding(stmt)) for name in _stored_names([stmt.target])]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [(name, _Binding(stmt)) for name in _stored_names([stmt])]
    return []


def _imported_hits(nodes: list[ast.AST], roots: set[str]) -> set[str]:
    """Families a piece of code (its nodes, ast.walk's) imports itself (`from torch.nn.functional import softmax`,
    attn_ref); the names it binds to torch are added to ``roots``."""
    hits = set()
    for sub in nodes:
        if not isinstance(sub, (ast.Import, ast.ImportFrom)):
            continue
        for alias in sub.names:
            path = f"{sub.module}.{alias.name}" if isinstance(sub, ast.ImportFrom) else alias.name
            top = path.split(".")[0]
            if top == REFERENCE:
                hits.add("attn_ref")
            elif top == "torch":
                family = _family(path.rsplit(".", 1)[-1]) if isinstance(sub, ast.ImportFrom) else None
                hits |= {family} if family else set()
                roots.add(alias.asname or alias.name.split(".")[0])
    return hits


class _Module:
    """The notebook's module-level names, and which of them lead to a forbidden thing."""

    def __init__(self, trees: list[ast.Module]):
        self.bindings: dict[str, _Binding] = {}
        for tree in trees:
            self._bind_block(tree.body)
        self.torch_names = {name for name, b in self.bindings.items() if b.imported.split(".")[0] == "torch"}
        self._grow_torch_aliases()
        self.tainted: dict[str, set[str]] = {}
        self._own: dict[str, tuple[set[str], set[str]]] = {}  # _own_hits, worked out once a name
        self._taint()

    def _bind_block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.bindings.update(_bound_names(stmt))
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # a function's or class's own names are not the module's
            for block in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, block, None)
                if isinstance(inner, list):
                    self._bind_block([s for s in inner if isinstance(s, ast.stmt)] +
                                     [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body])

    def _grow_torch_aliases(self) -> None:
        """`F2 = torch.nn.functional`, `ops = torch.ops.aten`: names bound to torch objects are torch too."""
        changed = True
        while changed:
            changed = False
            for name, b in self.bindings.items():
                if name in self.torch_names or b.imported or not isinstance(b.node, (ast.Attribute, ast.Name)):
                    continue
                if _dotted(b.node).split(".")[0] in self.torch_names:
                    self.torch_names.add(name)
                    changed = True

    def direct_hits(self, nodes: list[ast.AST], local: set[str]) -> set[str]:
        """Families a piece of code (its nodes) names itself: torch attribute chains and spelled-out lookups."""
        roots = (self.torch_names - local) | {REFERENCE}
        hits = _imported_hits(nodes, roots)  # imports inside the code itself (roots grows with their names)
        for sub in nodes:
            family = None
            if isinstance(sub, ast.Attribute) and _dotted(sub).split(".")[0] in roots:
                family = _family(sub.attr)
            elif isinstance(sub, ast.Call) and _dotted(sub.func).split(".")[-1] in LOOKUPS:
                hits |= {f for f in (_family(t) for t in map(_const_str, sub.args) if t) if f}
            elif isinstance(sub, ast.Subscript):
                text = _const_str(sub.slice)
                family = _family(text) if text else None
            if family:
                hits.add(family)
        return hits

    def references(self, nodes: list[ast.AST], local: set[str]) -> set[str]:
        return {sub.id for sub in nodes if isinstance(sub, ast.Name) and sub.id in self.bindings and sub.id not in local}

    @staticmethod
    def locals_of(node: ast.AST, nodes: list[ast.AST]) -> set[str]:
        """Names a function (``nodes``: its own, ast.walk's) binds itself (its parameters and assignments), which
        shadow module names."""
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return set()
        args = node.args
        names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        for sub in nodes:
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
        return names

    def _own_hits(self, name: str) -> tuple[set[str], set[str]]:
        """(the families a binding names itself, the module names it refers to), worked out once a name: every
        task's search of what its function reaches asks again."""
        if name not in self._own:
            self._own[name] = self._work_out_own_hits(name)
        hits, refs = self._own[name]
        return set(hits), set(refs)

    def _work_out_own_hits(self, name: str) -> tuple[set[str], set[str]]:
        b = self.bindings[name]
        if b.imported:
            if b.imported.split(".")[0] == REFERENCE:
                return {"attn_ref"}, set()
            family = _family(b.imported.rsplit(".", 1)[-1]) if b.imported.split(".")[0] == "torch" else None
            return ({family} if family else set()), set()
        if b.node is None:
            return set(), set()
        nodes = list(ast.walk(b.node))  # walked once for the three questions below
        local = self.locals_of(b.node, nodes)
        return self.direct_hits(nodes, local), self.references(nodes, local) - {name}

    def _taint(self) -> None:
        own, edges = {}, {}
        for name in self.bindings:
            own[name], edges[name] = self._own_hits(name)
        self.tainted = {name: set(hits) for name, hits in own.items()}
        changed = True
        while changed:
            changed = False
            for name, refs in edges.items():
                for ref in refs:
                    extra = self.tainted[ref] - self.tainted[name]
                    if extra:
                        self.tainted[name] |= extra
                        changed = True


def _contract_names(hits: set[str], forbidden: list[str]) -> list[str]:
    names = set()
    for hit in hits:
        if hit == "attn_ref":
            if REFERENCE in forbidden:
                names.add(REFERENCE)
        elif any(_family(f.rsplit(".", 1)[-1]) for f in forbidden):
            names.add(FAMILIES[hit])
    return sorted(names)


def forbidden_uses(code_cells: list[str], function: str, forbidden: list[str]) -> list[str]:
    """The forbidden things that ``function``, or anything of the notebook it reaches, refers to."""
    trees = [t for source in code_cells for t in _parse(source)]
    return _forbidden(_Module(trees), function, forbidden)


def _forbidden(module: _Module, function: str, forbidden: list[str], stand_ins: frozenset[str] = frozenset()) -> list[str]:
    """``stand_ins``: functions a correct implementation replaces while this one is graded (not followed)."""
    binding = module.bindings.get(function)
    if not forbidden or binding is None or not isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    if not stand_ins:
        return _contract_names(module.tainted.get(function, set()), forbidden)
    hits, seen, todo = set(), set(), [function]
    while todo:
        name = todo.pop()
        if name in seen or name in stand_ins or name not in module.bindings:
            continue
        seen.add(name)
        own, refs = module._own_hits(name)
        hits |= own
        todo.extend(refs)
    return _contract_names(hits, forbidden)


def analyse(code_cells: list[str], tasks: dict[str, tuple]) -> Analysis:
    """Everything static about a notebook, parsed once: {task: (function, forbidden names[, stand-ins])}."""
    per_cell = [_parse(source) for source in code_cells]
    module = _Module([t for trees in per_cell for t in trees])
    forbidden = {task: _forbidden(module, spec[0], spec[1], frozenset(spec[2]) if len(spec) > 2 else frozenset())
                 for task, spec in tasks.items()}
    walked = [[list(ast.walk(tree)) for tree in trees] for trees in per_cell]  # each cell's nodes, for both questions
    return Analysis({t: hits for t, hits in forbidden.items() if hits}, _uses_reference(per_cell, walked, code_cells),
                    _integrity_flags(walked, module))


# What a TA should see: code that reaches for the grader's files, patches comparisons or otter, or
# writes results. Flags only; the grading itself does not depend on any of it.
SUSPICIOUS_STRINGS = {
    "/autograder": "refers to the autograder's folder",
    "checks.json": "refers to the hidden checks file",
    "results.json": "refers to a results file",
    ".OTTER_LOG": "refers to otter's log",
    "otter_config": "refers to otter's configuration",
    "tests/": "refers to a tests folder",
    "/proc/": "reads other processes' information (/proc)",
}
DYNAMIC_IMPORTS = {"__import__", "import_module", "exec", "eval", "compile"}
PATCHED_MODULES = {"np", "numpy", "torch", "otter", "math", "builtins", "json"}


def _imported_modules(node: ast.Import | ast.ImportFrom) -> set[str]:
    """Top-level packages an import statement reaches: `from attn_ref.answers import X` -> {"attn_ref", "X"}."""
    names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
    return {n.split(".")[0] for n in names}


def _node_flags(node: ast.AST, patched: set[str]) -> set[str]:
    """What one node of a cell does that a flag names (a patched library, a lying value, the reference)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {why for needle, why in SUSPICIOUS_STRINGS.items() if needle in node.value}
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {f"replaces {_dotted(t)}" for t in targets if isinstance(t, ast.Attribute) and _dotted(t).split(".")[0] in patched}
    if isinstance(node, ast.Call) and _dotted(node.func) == "setattr" and node.args:
        return {f"calls setattr on {_dotted(node.args[0])}"} if _dotted(node.args[0]).split(".")[0] in patched else set()
    if isinstance(node, ast.FunctionDef) and node.name in ("__eq__", "__float__", "__bool__", "__index__"):
        return {f"defines {node.name} (a value that may lie about itself)"}
    if isinstance(node, (ast.Import, ast.ImportFrom)) and REFERENCE in _imported_modules(node):
        return {"imports attn_ref (the grader's reference)"}
    return set()


def _integrity_flags(walked: list[list[list[ast.AST]]], module: _Module) -> list[str]:
    """Plain-language flags, each with the code cell it was found in (``walked``: each cell's trees' nodes)."""
    flags = []
    patched = PATCHED_MODULES | {name for name, b in module.bindings.items() if b.imported}
    for number, trees in enumerate(walked, start=1):
        found = set().union(*(_node_flags(node, patched) for nodes in trees for node in nodes))
        flags += [f"code cell {number}: {why}" for why in sorted(found)]
    return flags


def _uses_reference(per_cell: list[list[ast.Module]], walked: list[list[list[ast.AST]]], sources: list[str]) -> bool:
    """Any mention of attn_ref: a submission that reaches for the answer key scores 0 on what it grades."""
    for trees, cell_nodes, source in zip(per_cell, walked, sources):
        if not trees and REFERENCE in source:
            return True
        for nodes in cell_nodes:
            for node in nodes:
                if isinstance(node, ast.Name) and node.id == REFERENCE:
                    return True
                if isinstance(node, (ast.Import, ast.ImportFrom)) and REFERENCE in _imported_modules(node):
                    return True
                if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] in DYNAMIC_IMPORTS:
                    joined = "".join(a.value for a in ast.walk(node) if isinstance(a, ast.Constant) and isinstance(a.value, str))
                    if "attn" in joined and "ref" in joined:  # __import__("attn" + "_ref")
                        return True
    return False
