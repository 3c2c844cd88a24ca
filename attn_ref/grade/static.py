"""Static checks on the submitted code: forbidden calls inside a task's function (or anything it calls).

Code cells are parsed after IPython's own transforms, so `%timeit` and `!cmd` lines do not break the parser.
"""

from __future__ import annotations

import ast


def python_source(cell_source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return cell_source
    try:
        return TransformerManager().transform_cell(cell_source)
    except Exception:
        return cell_source


def _parse_cells(code_cells: list[str]) -> list[ast.AST]:
    trees = []
    for source in code_cells:
        try:
            trees.append(ast.parse(python_source(source)))
        except SyntaxError:
            continue  # the kernel reports it; nothing to inspect
    return trees


def _aliases(trees: list[ast.AST], forbidden: list[str]) -> dict[str, str]:
    """Local names bound to forbidden objects: `from torch.nn.functional import scaled_dot_product_attention as f`."""
    found = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    for banned in forbidden:
                        if full == banned or full.startswith(banned + "."):
                            found[alias.asname or alias.name] = banned
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    for banned in forbidden:
                        if alias.name == banned or alias.name.startswith(banned + "."):
                            found[(alias.asname or alias.name).split(".")[0]] = banned
    for tree in trees:  # `fast = F.scaled_dot_product_attention` binds an alias too
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                hits = _hits(node.value, forbidden, found, set())
                for target in node.targets:
                    if isinstance(target, ast.Name) and hits:
                        found[target.id] = sorted(hits)[0]
    return found


def _hits(node: ast.AST, forbidden: list[str], aliases: dict[str, str], local_defs: set[str]) -> set[str]:
    """Forbidden things one function body refers to: `X.attr`, an imported alias, or getattr(X, "attr")."""
    leaf = {name.rsplit(".", 1)[-1]: name for name in forbidden}
    hits = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in leaf:
            hits.add(leaf[sub.attr])
        elif isinstance(sub, ast.Name) and sub.id in aliases and sub.id not in local_defs:
            hits.add(aliases[sub.id])
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            hits.update(_aliases([sub], forbidden).values())
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "getattr":
            for arg in sub.args[1:2]:
                if isinstance(arg, ast.Constant) and arg.value in leaf:
                    hits.add(leaf[arg.value])
    return hits


def _called_names(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name)}


def forbidden_uses(code_cells: list[str], function: str, forbidden: list[str]) -> list[str]:
    """The forbidden names that `function`, or a notebook function it reaches, refers to."""
    trees = _parse_cells(code_cells)
    defs: dict[str, ast.AST] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[node.name] = node  # the last definition wins, as in the kernel
    if function not in defs or not forbidden:
        return []
    aliases = _aliases(trees, forbidden)
    seen, todo, hits = set(), [function], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        hits |= _hits(defs[name], forbidden, aliases, set(defs))
        todo.extend(_called_names(defs[name]) & set(defs))
    return sorted(hits)


# What a TA should see: code that reaches for the grader's files, patches comparisons or otter, or
# writes results. Flags only; the grading itself does not depend on any of it.
SUSPICIOUS_STRINGS = {
    "/autograder": "refers to the autograder's folder",
    "checks.json": "refers to the hidden checks file",
    "results.json": "refers to a results file",
    ".OTTER_LOG": "refers to otter's log",
    "otter_config": "refers to otter's configuration",
    "tests/": "refers to a tests folder",
}
DYNAMIC_IMPORTS = {"__import__", "import_module", "exec", "eval", "compile"}
PATCHED_MODULES = {"np", "numpy", "torch", "otter", "math", "builtins", "json"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _imported_modules(node: ast.Import | ast.ImportFrom) -> set[str]:
    """Top-level packages an import statement reaches: `from attn_ref.answers import X` -> {"attn_ref", "X"}."""
    names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
    return {n.split(".")[0] for n in names}


def _imported_names(trees: list[ast.AST]) -> set[str]:
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def integrity_flags(code_cells: list[str]) -> list[str]:
    """Plain-language flags, each with the code cell it was found in."""
    flags = []
    patched = PATCHED_MODULES | _imported_names(_parse_cells(code_cells))
    for number, source in enumerate(code_cells, start=1):
        try:
            tree = ast.parse(python_source(source))
        except SyntaxError:
            continue
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(why for needle, why in SUSPICIOUS_STRINGS.items() if needle in node.value)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    name = _dotted(target)
                    if isinstance(target, ast.Attribute) and name.split(".")[0] in patched:
                        found.add(f"replaces {name}")
            elif isinstance(node, ast.Call) and _dotted(node.func) == "setattr" and node.args:
                if _dotted(node.args[0]).split(".")[0] in patched:
                    found.add(f"calls setattr on {_dotted(node.args[0])}")
            elif isinstance(node, ast.FunctionDef) and node.name in ("__eq__", "__float__", "__bool__", "__index__"):
                found.add(f"defines {node.name} (a value that may lie about itself)")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if "attn_ref" in _imported_modules(node):
                    found.add("imports attn_ref (the grader's reference)")
        flags += [f"code cell {number}: {why}" for why in sorted(found)]
    return flags


def uses_grader_reference(code_cells: list[str]) -> bool:
    """Any mention of attn_ref: a submission that reaches for the answer key scores 0 on what it grades."""
    for source in code_cells:
        try:
            tree = ast.parse(python_source(source))
        except SyntaxError:
            if "attn_ref" in source:
                return True
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "attn_ref":
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if "attn_ref" in _imported_modules(node):
                    return True
            if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] in DYNAMIC_IMPORTS:
                strings = [a.value for a in ast.walk(node) if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                joined = "".join(strings)
                if "attn" in joined and "ref" in joined:  # __import__("attn" + "_ref")
                    return True
    return False
