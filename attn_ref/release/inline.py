"""Writing a module's code into what students get: the student environment has no attn_ref, so the few
modules students' code needs travel with it (the type rules inside the public tests, the written-answers
PDF inside export_written.py beside the notebook)."""

from __future__ import annotations

import ast
from importlib import resources


def module_body(package: str, name: str) -> str:
    """A module's source without its docstring, to sit inside a function of a notebook cell or test."""
    source = resources.files(package).joinpath(name).read_text()
    first = ast.parse(source).body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        source = "\n".join(source.splitlines()[first.end_lineno:])
    return source.strip() + "\n"
