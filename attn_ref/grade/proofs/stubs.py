"""Trivial stubs of a task, derived from its signature and the reference's outputs: code that does none of
the task, which must score 0 on it (`attn-ref check` proves this through the real grading path).

A stub is defined again before each probe (``source``): it returns the reference's shapes for that
probe's inputs, filled with zeros or ones (its dtype: the probe's for floats, bool for a mask; its device:
the probe's), or returns its first argument unchanged. ``torch.empty``/``np.empty`` is left out on
purpose: what it holds is whatever memory held, so a verdict on it would not repeat.
"""

from __future__ import annotations

import ast

import numpy as np

from ..checks_json import FunctionUnit, Probe

KINDS = {
    "zeros": "zeros of the reference's shapes, dtype and device",
    "ones": "ones (an all-True mask) of the reference's shapes, dtype and device",
    "echo": "its first argument, returned unchanged",
}


def _signature(task: FunctionUnit) -> ast.arguments:
    for node in ast.walk(ast.parse(task.starter or f"def {task.function}(*args, **kwargs): ...")):
        if isinstance(node, ast.FunctionDef) and node.name == task.function:
            return node.args
    raise ValueError(f"{task.name}: the starter defines no function {task.function}")


def _dtype(reference: np.ndarray, probe: Probe) -> str:
    if reference.dtype == np.bool_:
        return "bool"
    return probe.dtype if reference.dtype.kind == "f" else "int64"


def _constant(kind: str, reference, task: FunctionUnit, probe: Probe) -> str:
    """One output of a zeros or ones stub, as an expression."""
    if not isinstance(reference, np.ndarray) or reference.ndim == 0:
        return "0.0" if kind == "zeros" else "1.0"
    shape, dtype = tuple(int(n) for n in reference.shape), _dtype(reference, probe)
    if task.framework == "torch":
        return f"torch.{kind}({shape!r}, dtype=torch.{dtype}, device={probe.device!r})"
    return f"numpy.{kind}({shape!r}, dtype={dtype!r})"


def source(kind: str, task: FunctionUnit, probe: Probe, reference: list) -> str:
    """The stub's cell for one probe: ``def <function>(<the starter's parameters>)`` returning the stub's outputs."""
    arguments = _signature(task)
    if kind == "echo":
        names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        first = names[0] if names else "None"
        outputs = [first] * len(reference)
    else:
        outputs = [_constant(kind, ref, task, probe) for ref in reference]
    returned = outputs[0] if len(outputs) == 1 else "(" + ", ".join(outputs) + ",)"
    module = "torch" if task.framework == "torch" else "numpy"
    return f"def {task.function}({ast.unparse(arguments)}):\n    import {module}\n    return {returned}\n"
