"""Attacks on the lab's probes: loops, exits, memory, global torch settings, patched comparisons, hidden calls, fake results.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

import subprocess
import sys

import psutil
import pytest
from conftest import max_scores, scores
from hostile import IGNORES_INTERRUPTS, appended, notebook, replaced, visible_text, with_function


def test_infinite_loops_in_a_task_and_in_a_cell(release, local):
    nb = with_function(release, "lab", "def additive_attention(", "def additive_attention(*args):\n    while True:\n        pass")
    nb = appended(nb, "while True:\n    pass")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c2"] == 0 and "did not finish" in next(t["output"] for t in results["tests"] if t["name"].startswith("c2"))
    assert {k: v for k, v in got.items() if k != "c2"} == {k: v for k, v in full.items() if k != "c2"}
    assert any("stopped after" in e for e in results["extra_data"]["cell_errors"])
    assert results["extra_data"]["status"] == "timeout"


def test_a_loop_that_ignores_interrupts_restarts_the_kernel(release, local):
    nb = with_function(release, "lab", "def sliding_window_mask(", IGNORES_INTERRUPTS)
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c7"] == 0 and got["c8"] == full["c8"]
    assert results["extra_data"]["kernel_restarts"] >= 1


def test_exits_in_tasks_and_cells(release, local):
    nb = with_function(release, "lab", "def causal_mask(", "def causal_mask(T, device=None):\n    import os\n    os._exit(3)")
    nb = replaced(nb, "def self_attention(", "def self_attention(x, W_q, W_k, W_v, causal=True):\n    raise SystemExit(0)")
    nb = appended(nb, "import os\nos._exit(1)", at=4)  # a cell that kills the kernel, between tasks
    nb = appended(nb, "import sys\nsys.exit(0)")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    outputs = {t["name"][:2]: t["output"] for t in results["tests"]}
    assert got["c4"] == 0 and "crashed the kernel" in outputs["c4"]
    assert got["c5"] == 0 and "SystemExit" in outputs["c5"]
    for task in ("c1", "c2", "c3", "c6", "c7", "c8"):  # c6 and c7 still run: the killing cell is skipped
        assert got[task] == full[task], (task, outputs[task])
    assert any("skipped (it crashed the kernel)" in e for e in results["extra_data"]["cell_errors"])


def test_huge_allocations_hit_the_memory_limit(release, local):
    nb = appended(notebook(release, "lab", "solution"), "import numpy as np\nbig = np.ones(6 * 10**8)  # 4.8 GB")
    results = local(nb, "lab")
    assert results["score"] == 80
    assert any("MemoryError" in e for e in results["extra_data"]["cell_errors"])


def test_global_torch_settings_are_reset_before_each_call(release, local):
    nb = appended(notebook(release, "lab", "solution"), """
torch.set_default_dtype(torch.float64)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.set_float32_matmul_precision("medium")
np.random.seed(1)
""")
    assert local(nb, "lab")["score"] == 80


def test_patched_comparisons_do_not_rescue_a_wrong_answer(release, local):
    nb = with_function(release, "lab", "def scaled_dot_product_attention(", """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights""")
    nb = appended(nb, """
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
torch.allclose = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
np.array_equal = lambda *a, **k: True
""")
    results = local(nb, "lab")
    assert scores(results)["c3"] < 10
    flags = "\n".join(results["extra_data"]["integrity_flags"])
    assert "replaces np.allclose" in flags and "replaces torch.allclose" in flags


@pytest.mark.parametrize("call", [
    'getattr(torch.nn.functional, "scaled_dot" + "_product_attention")(q, k, v, attn_mask=mask)',
    'getattr(torch.ops.aten, bytes.fromhex("5f7363616c65645f646f745f70726f647563745f617474656e74696f6e5f6d617468").decode())(q, k, v, attn_mask=mask)[0]',
    'getattr(torch.ops.aten, bytes.fromhex("5f7363616c65645f646f745f70726f647563745f666c6173685f617474656e74696f6e5f666f725f637075").decode())(q, k, v)[0]',
])
def test_tripwire_catches_a_forbidden_call_the_parser_cannot_see(release, local, call):
    nb = with_function(release, "lab", "def scaled_dot_product_attention(", f"""def scaled_dot_product_attention(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return {call}, weights""")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c3"] == 0  # c5 and c6 are graded with a correct c3 in its place: charged once
    assert got["c5"] == full["c5"] and got["c6"] == full["c6"]
    c3 = next(t["output"] for t in results["tests"] if t["name"].startswith("c3"))
    assert "which this task does not allow" in c3 and "scaled_dot_product" in c3
    assert "c3" in results["extra_data"]["forbidden_calls"]


def test_objects_that_pretend_to_be_answers(release, local):
    nb = with_function(release, "lab", "def causal_mask(", """class Liar(torch.Tensor):
    def __eq__(self, other):
        return True

def causal_mask(T, device=None):
    return torch.zeros(T, T, dtype=torch.bool, device=device).as_subclass(Liar)""")
    nb = replaced(nb, "def rnn_gradient_norm(", """class Number:
    def __float__(self):
        return 0.9 ** 49

def rnn_gradient_norm(T, factor):
    return Number()""")
    results = local(nb, "lab")
    got = scores(results)
    assert got["c4"] <= 2  # what an honest all-False mask on the right device earns (the device probe)
    assert got["c8"] == 0


def test_fake_results_and_orphans_in_a_new_session(release, local, tmp_path):
    nb = appended(notebook(release, "practice", "blank"), f"""
import json, os, subprocess
fake = {{"score": 1000, "tests": []}}
print(json.dumps(fake))
for path in ["{tmp_path}/results/practice.json", "results.json", "/autograder/results/results.json"]:
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        open(path, "w").write(json.dumps(fake))
    except OSError:
        pass
subprocess.Popen(["setsid", "sleep", "313"])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(313)
    os._exit(0)
""")
    results = local(nb, "practice")  # also asserts no process is left behind
    assert results["score"] == 0
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and "313" in p.info["cmdline"]]


def test_the_time_budget_always_leaves_results(release, local):
    nb = with_function(release, "lab", "def softmax(", """def softmax(x, axis=-1):
    time.sleep(2.5)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)""")
    results = local(nb, "lab", budget=15)
    assert results["execution_time"] < 30
    assert "time budget for this submission ran out" in visible_text(results)
    assert results["extra_data"]["status"] == "timeout"


def test_the_grader_never_imports_torch(release, tmp_path):
    out, _ = release
    code = f"""
import sys
from attn_ref.grade import grade
results = grade({str(out / 'solutions/lab/lab.ipynb')!r}, {str(out / 'autograder/lab-autograder.zip')!r}, out_dir={str(tmp_path)!r})
assert results["score"] == 80, results["score"]
assert "torch" not in sys.modules, "the grader imported torch"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().endswith("ok"), done.stderr[-2000:]
