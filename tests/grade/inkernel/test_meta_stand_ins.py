"""The meta probes' shortcut: an op whose tensors are all on meta is run on CPU tensors of zeros laid out
the same way, and its outputs are given back as meta tensors (harness._on_cpu_stand_ins), so a grading
never pays for torch's Python meta kernels (their first call imports torch's compiler and sympy).

The shortcut must change no verdict: every correct implementation of the corpus, every mutant of the
course and the solution give, on the meta probes' inputs, what torch's own meta kernels give (the
outputs' devices, shapes, dtypes and strides, or the error's type), and so do ops chosen for their edges
(in place, views, mixed devices, values read, random draws, factories).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO
from course_units import assignment

from attn_ref.grade.inkernel import harness

ROOT = REPO
LAB = {t.name: t for t in assignment("lab").units if getattr(t, "framework", None) == "torch"}
META_TASKS = {name: task for name, task in LAB.items() if any(p.device == "meta" for p in task.probes)}


def _meta_args(task) -> tuple[list, dict]:
    """The task's meta probe's arguments, as the harness passes them (inputs on meta, `device="meta"`)."""
    probe = next(p for p in task.probes if p.device == "meta")
    args, kwargs = [], {}
    for name, spec in ((a.name, a.spec) for a in probe.args):
        if "normal" in spec:
            value = torch.zeros(spec["normal"]).to("meta")
        elif "mask" in spec:
            value = torch.ones(spec["mask"], dtype=torch.bool).to("meta")
        elif spec.get("device"):
            value = "meta"
        else:
            value = spec["value"]
        if spec.get("keyword") or spec.get("device"):
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs


def _summary(value):
    if isinstance(value, torch.Tensor):
        return ("tensor", value.device.type, tuple(value.shape), value.dtype, value.stride())
    if isinstance(value, (list, tuple)):
        return tuple(_summary(v) for v in value)
    return ("value", type(value).__name__)


def _run(thunk, stand_ins: bool, monkeypatch):
    """(what came back or the error's type, whether values were read) under the harness's meta mode."""
    with monkeypatch.context() as patch:
        if not stand_ins:
            patch.setattr(harness, "_on_cpu_stand_ins", lambda *a: harness._MISSING)
        watch = harness._Watch(torch, {}, False)
        try:
            with watch.meta_mode():
                outcome = _summary(thunk())
        except Exception as err:  # noqa: BLE001 - the error's type is part of the verdict
            outcome = ("raised", type(err).__name__)
    return outcome, watch.meta_values_read


def _namespace() -> dict:
    """Every task's solution, so that a file that calls an earlier task's function finds it."""
    ns = {"torch": torch, "math": math, "np": np}
    for task in LAB.values():
        exec(compile((ROOT / "course" / "lab" / task.name / "solution.py").read_text(), task.name, "exec"), ns)
    return ns


def _implementations() -> list[tuple[str, Path]]:
    found = []
    for name in sorted(META_TASKS):
        found.append((name, ROOT / "course" / "lab" / name / "solution.py"))
        found += [(name, p) for p in sorted((ROOT / "tests" / "corpus" / "correct" / name).glob("*.py"))]
        found += [(name, p) for p in sorted((ROOT / "course" / "lab" / name / "mutants").glob("*.py"))]
    return found


IMPLEMENTATIONS = _implementations()


def test_the_corpora_cover_every_meta_probe():
    assert set(META_TASKS) == {"c3", "c4", "c5", "c6", "c7"}
    assert len(IMPLEMENTATIONS) > 60
    assert any("cpu" in p.name for _, p in IMPLEMENTATIONS)  # device bugs are among them


@pytest.mark.parametrize("task, path", IMPLEMENTATIONS, ids=[f"{t}/{p.parent.name}/{p.stem}" for t, p in IMPLEMENTATIONS])
def test_an_implementation_meets_the_meta_probe_as_with_torchs_meta_kernels(task, path, monkeypatch):
    ns = _namespace()
    exec(compile(path.read_text(), str(path), "exec"), ns)
    function = ns[META_TASKS[task].function]
    args, kwargs = _meta_args(META_TASKS[task])
    shortcut = _run(lambda: function(*args, **kwargs), True, monkeypatch)
    kernels = _run(lambda: function(*args, **kwargs), False, monkeypatch)
    assert shortcut == kernels


def _meta(*shape, dtype=torch.float32):
    return torch.zeros(shape, dtype=dtype).to("meta")


EDGES = {
    "in place on a view": lambda: _meta(4, 4).t().masked_fill_(_meta(4, 4, dtype=torch.bool), 0.0),
    "in place, broadcast into self": lambda: _meta(3, 4).add_(_meta(4)),
    "in place, a shape that cannot be written": lambda: _meta(4).add_(_meta(3, 4)),
    "in place on an expanded tensor": lambda: _meta(4).expand(3, 4).add_(1.0),
    "resize_": lambda: _meta(4).resize_(2, 3),
    "out=": lambda: torch.add(_meta(3), _meta(3), out=_meta(3)),
    "a view, then contiguous": lambda: _meta(2, 3, 4).transpose(0, 2).contiguous(),
    "view of a transposed tensor": lambda: _meta(3, 4).t().view(12),
    "a CPU mask on meta scores": lambda: _meta(4, 4).masked_fill(torch.ones(4, 4, dtype=torch.bool), 0.0),
    "a CPU scalar tensor": lambda: _meta(4, 4) / torch.tensor(2.0),
    "a CPU matrix": lambda: _meta(4, 4) @ torch.zeros(4, 4),
    "a factory on meta": lambda: torch.arange(5, device="meta")[:, None] - torch.arange(5, device="meta"),
    "a factory on the CPU from meta": lambda: torch.zeros_like(_meta(3), device="cpu"),
    "random on meta": lambda: torch.randn(3, 3, device="meta") + torch.rand_like(_meta(3, 3)),
    "integer division by zero": lambda: _meta(3, dtype=torch.int64) // _meta(3, dtype=torch.int64),
    "item": lambda: _meta(1).item() + 1,
    "nonzero": lambda: _meta(4, dtype=torch.bool).nonzero(),
    "boolean indexing": lambda: _meta(4)[_meta(4, dtype=torch.bool)],
    "integer indexing": lambda: _meta(4, 3)[_meta(2, dtype=torch.int64)],
    "tolist": lambda: _meta(2, 2).tolist(),
    "a mismatch of shapes": lambda: _meta(2, 3) @ _meta(4, 5),
    "a mismatch of dtypes": lambda: _meta(2, 3) @ _meta(3, 2, dtype=torch.float64),
    "softmax of -inf rows, nan_to_num": lambda: torch.softmax(_meta(2, 3).fill_(-math.inf), -1).nan_to_num(0.0),
    "half precision": lambda: _meta(2, 3, dtype=torch.float16) @ _meta(3, 2, dtype=torch.float16),
    "split and cat": lambda: torch.cat(_meta(4, 6).split(2, dim=-1), dim=0),
    "einsum": lambda: torch.einsum("bqd,bkd->bqk", _meta(2, 3, 4), _meta(2, 5, 4)),
    "tril in place": lambda: torch.ones(4, 4, device="meta").tril_(),
    "where with a scalar": lambda: torch.where(_meta(3, dtype=torch.bool), _meta(3), 0.0),
    "huge": lambda: torch.ones(1 << 20, 1 << 20, device="meta").sum(-1),
}


@pytest.mark.parametrize("edge", sorted(EDGES))
def test_an_edge_meets_meta_as_with_torchs_meta_kernels(edge, monkeypatch):
    assert _run(EDGES[edge], True, monkeypatch) == _run(EDGES[edge], False, monkeypatch)


def test_the_solutions_meta_probes_never_import_torchs_compiler():
    """What the shortcut is for, in a fresh interpreter: the meta probes of the solution run without
    torch._dynamo or sympy (about a CPU-second on the first meta kernel otherwise)."""
    script = f"""
import math, sys, numpy as np, torch
sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(ROOT / 'tests')!r}]  # this file, and conftest beside the tests
from test_meta_stand_ins import META_TASKS, _meta_args, _namespace
from attn_ref.grade.inkernel import harness
ns = _namespace()
for task in META_TASKS.values():
    args, kwargs = _meta_args(task)
    watch = harness._Watch(torch, {{}}, False)
    with watch.meta_mode():
        out = ns[task.function](*args, **kwargs)
    first = out[0] if isinstance(out, tuple) else out
    assert first.device.type == "meta", task.name
print(sorted(m for m in ("torch._dynamo", "sympy") if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
