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
