"""The conventions of attn_ref's docstring, one by one."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO

import attn_ref


def test_numpy_path_never_imports_torch():
    code = """
import sys, numpy as np, attn_ref, attn_ref.costs
x = np.random.default_rng(0).standard_normal((2, 5, 4))
attn_ref.softmax(x)
attn_ref.scaled_dot_product_attention(x, x, x, causal=True, window=2)
attn_ref.self_attention(x, np.eye(4), np.eye(4), np.eye(4))
attn_ref.decode_with_kv_cache(x, np.eye(4), np.eye(4), np.eye(4))
attn_ref.chunked_attention(x, x, x, chunk_size=2, causal=True)
attn_ref.additive_attention(x[0, 0], x[0], np.eye(4), np.eye(4), np.ones(4))
attn_ref.causal_mask(3, 5); attn_ref.sliding_window_mask(4, 2)
assert "torch" not in sys.modules, "torch was imported"
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_causal_mask_bottom_right():
    np.testing.assert_array_equal(attn_ref.causal_mask(3), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(attn_ref.causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])
    np.testing.assert_array_equal(attn_ref.causal_mask(1, 4), [[1, 1, 1, 1]])  # a decode step sees the whole cache
    np.testing.assert_array_equal(attn_ref.causal_mask(3, 2), [[0, 0], [1, 0], [1, 1]])


def test_sliding_window_keeps_window_keys_itself_included():
    np.testing.assert_array_equal(
        attn_ref.sliding_window_mask(5, 2),
        [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]],
    )
    for T, w in [(9, 3), (16, 4), (7, 1)]:  # the contract's count: T·w − w(w−1)/2 allowed scores
        assert attn_ref.sliding_window_mask(T, w).sum() == T * w - w * (w - 1) // 2
    np.testing.assert_array_equal(attn_ref.sliding_window_mask(6, 6), attn_ref.causal_mask(6))


def test_masks_on_a_device_are_torch():
    m = attn_ref.causal_mask(4, device="cpu")
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool
    assert attn_ref.sliding_window_mask(4, 2, device="meta").device.type == "meta"
    assert isinstance(attn_ref.causal_mask(4), np.ndarray)


def test_numpy_mask_is_accepted_with_tensors():
    q = torch.randn(3, 2, dtype=torch.float64)
    out, _ = attn_ref.scaled_dot_product_attention(q, q, q, mask=attn_ref.causal_mask(3))
    torch.testing.assert_close(out, attn_ref.scaled_dot_product_attention(q, q, q, causal=True)[0])


@pytest.mark.parametrize("name", ["sdpa", "self", "decode", "chunked", "additive", "softmax"])
def test_meta_device_kept(name):
    """Pure tensor code must build its masks and buffers on the inputs' device."""
    x = torch.empty(2, 5, 4, device="meta")
    W = torch.empty(4, 4, device="meta")
    out = {
        "sdpa": lambda: attn_ref.scaled_dot_product_attention(x, x, x, causal=True, window=2)[0],
        "self": lambda: attn_ref.self_attention(x, W, W, W)[0],
        "decode": lambda: attn_ref.decode_with_kv_cache(x, W, W, W),
        "chunked": lambda: attn_ref.chunked_attention(x, x, x, chunk_size=2, causal=True),
        "additive": lambda: attn_ref.additive_attention(x[0, 0], x[0], W, W, torch.empty(4, device="meta"))[0],
        "softmax": lambda: attn_ref.softmax(x, mask=attn_ref.causal_mask(5, 4, device="meta")),
    }[name]()
    assert out.device.type == "meta"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_dtype_kept(dtype):
    x = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(dtype)
    W = np.eye(5, dtype=dtype)
    for out in (
        attn_ref.softmax(x, mask=attn_ref.causal_mask(4, 5)),
        attn_ref.scaled_dot_product_attention(x, x, x, causal=True)[0],
        attn_ref.self_attention(x, W, W, W)[0],
        attn_ref.decode_with_kv_cache(x, W, W, W),
        attn_ref.chunked_attention(x, x, x, chunk_size=3, causal=True),
        attn_ref.additive_attention(x[0, 0], x[0], W, W, np.ones(5, dtype=dtype))[0],
    ):
        assert out.dtype == dtype


def test_torch_float32_kept():
    x = torch.randn(2, 4, 3)
    W = torch.eye(3)
    assert attn_ref.self_attention(x, W, W, W)[0].dtype == torch.float32
    assert attn_ref.decode_with_kv_cache(x, W, W, W).dtype == torch.float32


def test_the_command_line_builds_without_the_release_builder():
    """The autograder zip carries the grader, not attn_ref.release; its run_autograder builds this same parser."""
    code = ("import sys; sys.modules['attn_ref.release'] = None\n"
            "from attn_ref.cli import build_parser\n"
            "build_parser().parse_args(['grade', 'x.ipynb', '--autograder', 'z.zip'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]


def test_what_runs_in_the_kernel_imports_nothing_of_the_grader():
    """The kernel's code (grade/inkernel/ and what session.KERNEL_MODULES sends with it) imports only the
    standard library, numpy and torch; its imports of one another are the ones dropped when it is sent."""
    import ast
    import importlib

    from attn_ref.grade.session import KERNEL_MODULES, SENT_WITH_HARNESS

    inkernel = Path(attn_ref.__file__).parent / "grade" / "inkernel"
    modules = {Path(importlib.import_module(m).__file__).resolve(): m for m in KERNEL_MODULES}
    modules[(inkernel / "boot.py").resolve()] = "attn_ref.grade.inkernel.boot"  # a script: importing it starts a kernel
    assert {p.resolve() for p in inkernel.glob("*.py") if p.name != "__init__.py"} <= set(modules)
    allowed = set(sys.stdlib_module_names) | {"__main__", "numpy", "torch", "ipykernel"}
    for path, module in sorted(modules.items()):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("attn_ref")):
                assert lines[node.lineno - 1].endswith(SENT_WITH_HARNESS), f"{path.name}:{node.lineno} imports the grader"
                target = importlib.util.resolve_name("." * node.level + (node.module or ""), module.rsplit(".", 1)[0])
                assert target in KERNEL_MODULES, f"{path.name}:{node.lineno} imports {target}, which is not sent"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                assert all(n.split(".")[0] in allowed for n in names), f"{path.name}:{node.lineno} imports {names}"


def test_the_authoring_reference_names_every_generator_and_comparator():
    """The authoring reference (docs/instructors.md) cannot fall behind the registries an instructor writes probes with."""
    from attn_ref.grade.scoring.comparators import CHECKS
    from attn_ref.grade.scoring.inputs import GENERATORS

    doc = (REPO / "docs" / "instructors.md").read_text()
    missing = [name for name in (*CHECKS, *GENERATORS) if f"`{name}" not in doc and f"\"{name}\"" not in doc]
    assert not missing, f"docs/instructors.md does not describe {missing}"
