"""The `lab` release: c1–c8, attention in NumPy and PyTorch, one unit each.

Each task: a prompt, a starter function whose body Otter replaces with `...` for students, a worked
example whose printed numbers come from attn_ref, public checks (properties only) and hidden probes
(data for the grader: inputs to generate, comparators to apply, points).
"""

from __future__ import annotations

import numpy as np

import attn_ref

from .units import Probe, Task

TITLE = "Lab 3.1: attention in code"

FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "attn_ref",
)

INTRO = """# Lab 3.1: attention in code

You will write the pieces of note 3.1 as code: a stable softmax and Bahdanau's additive attention in NumPy,
then scaled dot-product attention, masks, self-attention, a key/value cache and an RNN gradient in PyTorch.

**Conventions** (the autograder uses the same ones):
* Shapes are `(..., T, d)`: any leading batch and head dimensions broadcast.
* Masks are boolean with `True` = *may attend* (PyTorch's convention). A row with no allowed key gets zero
  weights and a zero output, never NaN.
* Return tensors on the inputs' device and in their dtype (float32 in, float32 out).
* Do not write to your inputs.
* In c3, c5 and c6 do not call `torch.nn.functional.scaled_dot_product_attention` or
  `torch.nn.MultiheadAttention`: the point is to write them. Doing so zeroes that task.

**Feedback.** `grader.check("c3")` runs public checks: shapes, dtypes, properties such as "rows sum to 1",
and the worked example of each task. After you submit, hidden checks call your functions on random inputs
(the same submission always gets the same inputs) and compare with a float64 reference, on the CPU and,
where the grader has one, on a GPU. Each hidden probe is its own line of partial credit.

**Tolerances.** An output passes when every entry is within rtol·|ref| + atol·max|ref| of the reference:
1e-5 and 1e-5 for float64 inputs, 1e-4 and 1e-4 for float32 (5e-4 on a GPU). Any sound implementation
passes: a float32 constant such as `torch.sqrt(torch.tensor(d_k))` is fine. One probe of c3, "float64
precision kept", gives keys that share a large component: computing in float32 there loses the
differences between scores, so compute in the inputs' dtype. A message names the relative error and the
tolerance, never the expected values.

**One mistake, one charge.** Where a task builds on an earlier one (c2 on c1, c5 on c3 and c4, c6 on c3),
a correct version of the earlier function stands in for yours while the later task is graded.

Cells tagged *exploration* (examples, timings, plots) are skipped while grading, so keep every function you
are asked for in its own task cell.
"""

SETUP = """import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

_ = torch.manual_seed(0)  # reproducible examples"""


def _fmt(array) -> str:
    return np.array2string(np.asarray(array), precision=4, suppress_small=True)


def _example_softmax() -> str:
    x = np.array([1.0, 2.0, 3.0])
    return f"""```python
>>> softmax(np.array([1.0, 2.0, 3.0]))
{_fmt(attn_ref.softmax(x))}
>>> softmax(np.array([1000.0, 1001.0, 1002.0]))   # the same: softmax ignores a shift
{_fmt(attn_ref.softmax(x + 1000))}
```"""


def _example_additive() -> str:
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    W = np.eye(2)
    context, weights = attn_ref.additive_attention(np.array([1.0, 0.0]), keys, W, W, np.ones(2))
    return f"""```python
>>> keys = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])   # three encoder states h_i
>>> context, weights = additive_attention(np.array([1.0, 0.0]), keys, np.eye(2), np.eye(2), np.ones(2))
>>> weights
{_fmt(weights)}
>>> context
{_fmt(context)}
```"""


def _example_sdpa() -> str:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out, weights = attn_ref.scaled_dot_product_attention(q, k, np.eye(3))
    return f"""```python
>>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
>>> k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
>>> out, weights = scaled_dot_product_attention(q, k, torch.eye(3))
>>> weights            # (T_q, T_k) = (2, 3); with v = I, out equals weights
{_fmt(weights)}
```"""


def _example_causal() -> str:
    return f"""```python
>>> causal_mask(4).int()
{_fmt(attn_ref.causal_mask(4).astype(int))}
```"""


def _example_window() -> str:
    mask = attn_ref.sliding_window_mask(5, 2)
    return f"""```python
>>> sliding_window_mask(5, 2).int()       # each query sees itself and one key back
{_fmt(mask.astype(int))}
>>> sliding_window_mask(5, 2).sum()       # T·w − w(w−1)/2 = {5 * 2 - 1}
{int(mask.sum())}
```"""


def _example_self() -> str:
    x = np.arange(6.0).reshape(3, 2) / 6
    out, weights = attn_ref.self_attention(x, np.eye(2), np.eye(2), np.eye(2))
    return f"""```python
>>> x = torch.arange(6.0).reshape(3, 2) / 6
>>> out, weights = self_attention(x, torch.eye(2), torch.eye(2), torch.eye(2))
>>> weights
{_fmt(weights)}
```"""


def _example_decode() -> str:
    x = np.arange(6.0).reshape(3, 2) / 6
    out = attn_ref.decode_with_kv_cache(x, np.eye(2), np.eye(2), np.eye(2))
    return f"""```python
>>> decode_with_kv_cache(x, torch.eye(2), torch.eye(2), torch.eye(2))   # x from c5
{_fmt(out)}
>>> # the same as self_attention(x, ..., causal=True)[0]
```"""


def _example_rnn() -> str:
    return f"""```python
>>> rnn_gradient_norm(3, 0.5)     # two steps: 0.5 · 0.5
{attn_ref.rnn_jacobian_norm(3, 0.5)}
>>> rnn_gradient_norm(11, 0.8)    # ten steps of 0.8
{attn_ref.rnn_jacobian_norm(11, 0.8):.6f}
```"""

def _literal(array) -> str:
    """An array as a Python literal for a public check (the worked examples are already public)."""
    return repr(np.round(np.asarray(array, dtype=np.float64), 6).tolist())


def _check_softmax_example() -> str:
    expected = _literal(attn_ref.softmax(np.array([1.0, 2.0, 3.0])))
    return f'''def test_c1_worked_example_and_input(softmax):
    import numpy as np
    x = np.array([1.0, 2.0, 3.0])
    before = x.copy()
    y = softmax(x)
    assert np.array_equal(x, before), "softmax wrote into its input: compute into new arrays"
    assert np.allclose(y, {expected}, atol=1e-5), "softmax([1, 2, 3]) should give the worked example's numbers"
    z = np.random.default_rng(2).standard_normal((2, 3, 4))
    assert np.allclose(softmax(z, axis=0).sum(axis=0), 1.0), "softmax(x, axis=0) should sum to 1 along axis 0"
'''


def _check_additive_example() -> str:
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    context, weights = attn_ref.additive_attention(np.array([1.0, 0.0]), keys, np.eye(2), np.eye(2), np.ones(2))
    return f'''def test_c2_worked_example(additive_attention):
    import numpy as np
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    context, weights = additive_attention(np.array([1.0, 0.0]), keys, np.eye(2), np.eye(2), np.ones(2))
    assert np.allclose(weights, {_literal(weights)}, atol=1e-5), "weights should match the worked example (v . tanh(W_q q + W_k h_i))"
    assert np.allclose(context, {_literal(context)}, atol=1e-5), "context should match the worked example"
'''


def _check_sdpa_example() -> str:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    _, weights = attn_ref.scaled_dot_product_attention(q, k, np.eye(3))
    return f'''def test_c3_worked_example_and_empty_rows(scaled_dot_product_attention):
    import torch
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out, weights = scaled_dot_product_attention(q, k, torch.eye(3))
    assert torch.allclose(weights, torch.tensor({_literal(weights)}), atol=1e-5), \\
        "weights should match the worked example (scale by 1/sqrt(d_k), d_k = q.shape[-1])"
    mask = torch.tensor([[True, True, False], [False, False, False]])
    out, weights = scaled_dot_product_attention(q, k, torch.eye(3), mask=mask)
    assert not torch.isnan(out).any() and (weights[1] == 0).all() and (out[1] == 0).all(), \\
        "a fully masked row should give zero weights and a zero output, not NaN"
'''


def _check_causal_example() -> str:
    return f'''def test_c4_worked_example(causal_mask):
    import torch
    assert causal_mask(4).int().tolist() == {attn_ref.causal_mask(4).astype(int).tolist()!r}, \\
        "causal_mask(4) should be True on and below the diagonal (query i sees keys 0..i)"
'''


def _check_self_attention_example() -> str:
    x = np.arange(6.0).reshape(3, 2) / 6
    _, weights = attn_ref.self_attention(x, np.eye(2), np.eye(2), np.eye(2))
    return f'''def test_c5_worked_example(self_attention):
    import torch
    x = torch.arange(6.0).reshape(3, 2) / 6
    out, weights = self_attention(x, torch.eye(2), torch.eye(2), torch.eye(2))
    assert torch.allclose(weights, torch.tensor({_literal(weights)}), atol=1e-5), "weights should match the worked example"
'''


def _check_decode_example() -> str:
    x = np.arange(6.0).reshape(3, 2) / 6
    out = attn_ref.decode_with_kv_cache(x, np.eye(2), np.eye(2), np.eye(2))
    return f'''def test_c6_worked_example_and_projections(decode_with_kv_cache):
    import torch
    x = torch.arange(6.0).reshape(3, 2) / 6
    out = decode_with_kv_cache(x, torch.eye(2), torch.eye(2), torch.eye(2))
    assert torch.allclose(out, torch.tensor({_literal(out)}), atol=1e-5), "outputs should match the worked example"
    g = torch.Generator().manual_seed(4)
    x, W_q, W_k, W_v = torch.randn(2, 6, 4, generator=g), torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)
    rows = []

    class CountKeyProjections(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            if any(t is W_k for t in tensors):
                rows.extend(t.numel() // 4 for t in tensors if t is not W_k)
            return func(*args, **(kwargs or {{}}))

    with CountKeyProjections():
        decode_with_kv_cache(x, W_q, W_k, W_v)
    assert sum(rows) <= 12, f"{{sum(rows)}} rows went through W_k for 12 tokens: project each token once, then keep its key"
'''


def _check_window_example() -> str:
    return f'''def test_c7_worked_example(sliding_window_mask):
    assert sliding_window_mask(5, 2).int().tolist() == {attn_ref.sliding_window_mask(5, 2).astype(int).tolist()!r}, \\
        "sliding_window_mask(5, 2) should match the worked example"
'''


def _check_rnn_example() -> str:
    return f'''def test_c8_worked_examples(rnn_gradient_norm):
    import math
    assert math.isclose(rnn_gradient_norm(3, 0.5), {attn_ref.rnn_jacobian_norm(3, 0.5)!r}, rel_tol=1e-6), \\
        "rnn_gradient_norm(3, 0.5) should be 0.25: two steps from h_1 to h_3"
    assert math.isclose(rnn_gradient_norm(11, 0.8), {attn_ref.rnn_jacobian_norm(11, 0.8)!r}, rel_tol=1e-5), \\
        "rnn_gradient_norm(11, 0.8) should match the worked example"
'''



# Known-correct minimal implementations, bound in place of the student's own while a later task that builds
# on them is graded (a bug is charged once). Plain NumPy and torch.
SOFTMAX_SUBSTITUTE = """def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
SDPA_SUBSTITUTE = """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
    return weights @ v, weights
"""
CAUSAL_SUBSTITUTE = """def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
"""


def normal(*shape, scale=1.0, common=None):
    spec = {"normal": list(shape), "scale": scale}
    if common is not None:
        spec["common"] = common
    return spec


def value(v, student_only=False):
    return {"value": v, "student_only": student_only}


DEVICE_ARG = ("device", {"device": True, "student_only": True})

F32 = dict(dtype="float32")
# A float32 autograd chain of 49 steps drifts ~3e-6 relative: accept it, reject any off-by-one (10%).
SCALAR_TOLERANCE = {"rtol": 1e-5, "atol": 0.0}
META = dict(device="meta", checks=("device_kept",))


TASKS: tuple[Task, ...] = (
    Task(
        name="c1",
        function="softmax",
        framework="numpy",
        title="A numerically stable softmax (NumPy)",
        prompt="""Attention turns scores into weights with a softmax (note 3.1 §4, "score, softmax, weighted
sum"). Write `softmax(x, axis=-1)` for a NumPy array: $\\mathrm{softmax}(x)_i = e^{x_i} / \\sum_j e^{x_j}$
along `axis`.

* Stable: logits of ±1e4 must give no NaN or inf. Subtracting each slice's maximum changes nothing
  mathematically and keeps every exponent ≤ 0.
* Any axis; do not modify `x`; keep its dtype (float32 in, float32 out).""",
        starter='''def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    # BEGIN SOLUTION
    shifted = x - np.max(x, axis=axis, keepdims=True)  # every exponent <= 0: no overflow
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)
    # END SOLUTION''',
        example=_example_softmax(),
        public_checks=(
            '''def test_c1_rows_sum_to_one(softmax):
    import numpy as np
    x = np.random.default_rng(0).standard_normal((3, 5))
    y = softmax(x)
    assert y.shape == x.shape, "softmax should keep the input's shape"
    assert np.allclose(y.sum(axis=-1), 1.0), "each row should sum to 1"
    assert (y >= 0).all(), "weights are never negative"
''',
            '''def test_c1_stable_for_big_logits(softmax):
    import numpy as np
    y = softmax(np.array([[1e4, 0.0, -1e4]]))
    assert np.isfinite(y).all(), "logits of 1e4 gave NaN or inf: subtract the maximum first"
''',
            _check_softmax_example(),
        ),
        probes=(
            Probe("matches the reference on random logits (4 × 7, axis=-1)", 3, (("x", normal(4, 7, scale=3.0)),)),
            Probe("works along axis=0 of a 3-D array", 2, (("x", normal(3, 4, 5, scale=3.0)), ("axis", value(0)))),
            Probe("logits of ±1e4 give no NaN or inf", 2, (("x", normal(3, 6, scale=1e4)),), checks=("finite", "matches_reference")),
            Probe("leaves its input unchanged", 1, (("x", normal(5, 5)),), checks=("inputs_unchanged", "matches_reference")),
            Probe("float32 in, float32 out", 2, (("x", normal(4, 6, scale=3.0)),), checks=("dtype_kept", "matches_reference"), **F32),
        ),
        reference="softmax",
        substitute=SOFTMAX_SUBSTITUTE,
    ),
    Task(
        name="c2",
        function="additive_attention",
        framework="numpy",
        title="Bahdanau's additive attention (NumPy)",
        prompt="""Bahdanau et al. (2015) score a decoder query $q$ against each encoder state $h_i$ with a small
network (note 3.1 §4–§5): $e_i = v^\\top \\tanh(W_q q + W_k h_i)$, then $\\alpha = \\mathrm{softmax}(e)$ and the
context $c = \\sum_i \\alpha_i h_i$ (the values are the encoder states).

The matrices act on **column vectors**, as in the paper: `W_q` has shape `(d_a, d_q)`, `W_k` has shape
`(d_a, d_k)`, `v` has shape `(d_a,)`; `query` is `(d_q,)` and `keys` is `(T, d_k)`. Return
`(context, weights)` with shapes `(d_k,)` and `(T,)`. You may use your `softmax` from c1.""",
        starter='''def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    # BEGIN SOLUTION
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v  # (T,): e_i = v . tanh(W_q q + W_k h_i)
    weights = softmax(scores)  # (T,)
    context = weights @ keys  # (d_k,)
    return context, weights
    # END SOLUTION''',
        example=_example_additive(),
        public_checks=(
            '''def test_c2_shapes_and_weights(additive_attention):
    import numpy as np
    rng = np.random.default_rng(1)
    context, weights = additive_attention(rng.standard_normal(3), rng.standard_normal((6, 5)),
                                          rng.standard_normal((4, 3)), rng.standard_normal((4, 5)),
                                          rng.standard_normal(4))
    assert np.shape(context) == (5,), "context should have shape (d_k,)"
    assert np.shape(weights) == (6,), "weights should have shape (T,)"
    assert np.isclose(np.sum(weights), 1.0), "weights should sum to 1"
''',
            _check_additive_example(),
        ),
        probes=(
            Probe(
                "matches the reference (d_q=3, d_k=5, d_a=4, T=6)",
                4,
                (("query", normal(3)), ("keys", normal(6, 5)), ("W_q", normal(4, 3, scale=0.7)), ("W_k", normal(4, 5, scale=0.7)), ("v", normal(4))),
            ),
            Probe(
                "weights are non-negative and sum to 1",
                2,
                (("query", normal(2)), ("keys", normal(9, 3)), ("W_q", normal(5, 2)), ("W_k", normal(5, 3)), ("v", normal(5))),
                checks=("rows_sum_to_one",),
            ),
            Probe(
                "one encoder state: weight 1 and context = that state",
                2,
                (("query", normal(4)), ("keys", normal(1, 3)), ("W_q", normal(2, 4)), ("W_k", normal(2, 3)), ("v", normal(2))),
            ),
            Probe(
                "float32 in, float32 out",
                2,
                (("query", normal(3)), ("keys", normal(5, 4)), ("W_q", normal(6, 3, scale=0.7)), ("W_k", normal(6, 4, scale=0.7)), ("v", normal(6))),
                checks=("dtype_kept", "matches_reference"),
                **F32,
            ),
        ),
        reference="additive_attention",
        outputs=("context", "weights"),
        builds_on=("c1",),
    ),
    Task(
        name="c3",
        function="scaled_dot_product_attention",
        framework="torch",
        title="Scaled dot-product attention (PyTorch)",
        prompt="""The default from here on (note 3.1 §4, note 3.2): $\\mathrm{softmax}(QK^\\top/\\sqrt{d_k})\\,V$.

Write `scaled_dot_product_attention(q, k, v, mask=None)` for tensors `q (..., T_q, d_k)`,
`k (..., T_k, d_k)`, `v (..., T_k, d_v)` and an optional bool `mask` broadcastable to `(..., T_q, T_k)`
with `True` = may attend. Return `(out, weights)`, shapes `(..., T_q, d_v)` and `(..., T_q, T_k)`.

* Scale by $1/\\sqrt{d_k}$, where $d_k$ is the last dimension of `q` (per head, not the model width).
* Apply the mask **before** the softmax; masked weights are exactly 0; a fully masked row gives zero weights
  and a zero output, not NaN.
* Keep the inputs' dtype and device; build nothing on a fixed device.
* Not allowed here: `torch.nn.functional.scaled_dot_product_attention`, `torch.nn.MultiheadAttention`.""",
        starter='''def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    # BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # before the softmax
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a fully masked row: NaN -> 0
    return weights @ v, weights
    # END SOLUTION''',
        example=_example_sdpa(),
        public_checks=(
            '''def test_c3_shapes_and_rows(scaled_dot_product_attention):
    import torch
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 4, generator=g), torch.randn(2, 3, 7, 4, generator=g), torch.randn(2, 3, 7, 6, generator=g)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 3, 5, 6), "out should be (..., T_q, d_v)"
    assert weights.shape == (2, 3, 5, 7), "weights should be (..., T_q, T_k)"
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 5)), "each row of weights should sum to 1"
''',
            '''def test_c3_mask_zeroes_weights(scaled_dot_product_attention):
    import torch
    q = k = v = torch.randn(4, 3, generator=torch.Generator().manual_seed(1))
    mask = torch.tensor([[True, False, True, True]] * 4)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert (weights[:, 1] == 0).all(), "masked positions (False) should get weight exactly 0"
    assert torch.allclose(weights.sum(-1), torch.ones(4)), "rows should still sum to 1"
''',
            _check_sdpa_example(),
        ),
        probes=(
            Probe(
                "no mask: B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6",
                2,
                (("q", normal(2, 3, 5, 4)), ("k", normal(2, 3, 7, 4)), ("v", normal(2, 3, 7, 6))),
            ),
            Probe(
                "float64 precision kept (the keys share a large component)",
                1,
                (("q", normal(2, 5, 3)), ("k", normal(2, 7, 3, common=1e4)), ("v", normal(2, 7, 3))),
                checks=("precision_kept",),
            ),
            Probe(
                "bool mask, True = may attend; masked weights exactly 0",
                2,
                (("q", normal(2, 6, 4)), ("k", normal(2, 8, 4)), ("v", normal(2, 8, 3)), ("mask", {"mask": [6, 8], "p": 0.6})),
                checks=("matches_reference", "masked_weights_zero"),
            ),
            Probe(
                "a fully masked row gives zero weights and output, not NaN",
                1,
                (("q", normal(4, 3)), ("k", normal(5, 3)), ("v", normal(5, 2)), ("mask", {"mask": [4, 5], "p": 0.7, "empty_rows": [1]})),
                checks=("finite", "matches_reference"),
            ),
            Probe(
                "a (B, 1, T_q, T_k) mask broadcasts over heads (B = H = 2)",
                1,
                (("q", normal(2, 2, 5, 4)), ("k", normal(2, 2, 5, 4)), ("v", normal(2, 2, 5, 3)), ("mask", {"mask": [2, 1, 5, 5], "p": 0.6})),
            ),
            Probe(
                "float32 in, float32 out",
                2,
                (("q", normal(3, 5, 8)), ("k", normal(3, 6, 8)), ("v", normal(3, 6, 8))),
                checks=("dtype_kept", "matches_reference"),
                **F32,
            ),
            Probe("stays on the inputs' device (meta tensors)", 1, (("q", normal(2, 5, 4)), ("k", normal(2, 5, 4)), ("v", normal(2, 5, 3)), ("mask", {"mask": [5, 5], "p": 0.7})), **META),
        ),
        reference="scaled_dot_product_attention",
        outputs=("out", "weights"),
        forbidden=FORBIDDEN,
        cuda=True,
        substitute=SDPA_SUBSTITUTE,
    ),
    Task(
        name="c4",
        function="causal_mask",
        framework="torch",
        title="A causal mask (PyTorch)",
        prompt="""A decoder may not look at the future. Write `causal_mask(T, device=None)`: a `(T, T)` bool tensor,
`True` on and below the diagonal (query $i$ may attend keys $0 \\dots i$), created on `device`.""",
        starter='''def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    # BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
    # END SOLUTION''',
        example=_example_causal(),
        public_checks=(
            '''def test_c4_shape_and_dtype(causal_mask):
    import torch
    m = causal_mask(6)
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, "return a bool tensor"
    assert m.shape == (6, 6), "shape should be (T, T)"
    assert m.sum().item() == 21, "a causal mask of T = 6 allows T(T+1)/2 = 21 pairs"
''',
            _check_causal_example(),
        ),
        probes=(
            Probe("T = 5", 4, (("T", value(5)),), checks=("matches_reference", "bool_dtype")),
            Probe("T = 1", 2, (("T", value(1)),)),
            Probe("T = 9, bool dtype", 2, (("T", value(9)),), checks=("bool_dtype", "matches_reference")),
            Probe("created on the requested device (meta)", 2, (("T", value(4)), DEVICE_ARG), **META),
        ),
        reference="causal_mask",
        outputs=("mask",),
        substitute=CAUSAL_SUBSTITUTE,
    ),
    Task(
        name="c5",
        function="self_attention",
        framework="torch",
        title="One head of self-attention (PyTorch)",
        prompt="""In self-attention every token of the same sequence is query, key and value (Vaswani et al.,
2017; note 3.1 §1). Write `self_attention(x, W_q, W_k, W_v, causal=True)` for `x (..., T, d_model)`:
$Q = xW_q$, $K = xW_k$, $V = xW_v$ with `W_q`, `W_k` of shape `(d_model, d_k)` and `W_v` of shape
`(d_model, d_v)` (row vectors, as in the paper); with `causal=True` each token attends only to itself and
earlier tokens. Use your c3 and c4. Return `(out, weights)`.""",
        starter='''def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    # BEGIN SOLUTION
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(q, k, v, mask=mask)
    # END SOLUTION''',
        example=_example_self(),
        public_checks=(
            '''def test_c5_causal_first_token(self_attention):
    import torch
    g = torch.Generator().manual_seed(2)
    x, W_q, W_k, W_v = torch.randn(2, 5, 6, generator=g), torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g), torch.randn(6, 3, generator=g)
    out, weights = self_attention(x, W_q, W_k, W_v, causal=True)
    assert out.shape == (2, 5, 3) and weights.shape == (2, 5, 5), "shapes (..., T, d_v) and (..., T, T)"
    assert torch.allclose(out[:, 0], x[:, 0] @ W_v, atol=1e-5), "the first token can only attend to itself"
    assert (weights.triu(1) == 0).all(), "no weight on future tokens when causal=True"
''',
            _check_self_attention_example(),
        ),
        probes=(
            Probe(
                "causal (default): B=2, T=6, d_model=5, d_k=3, d_v=4",
                3,
                (("x", normal(2, 6, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4))),
            ),
            Probe(
                "causal=False attends to every token",
                2,
                (("x", normal(2, 6, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4)), ("causal", value(False))),
            ),
            Probe(
                "extra leading dimensions (2, 3, T, d_model)",
                2,
                (("x", normal(2, 3, 4, 6)), ("W_q", normal(6, 2, scale=0.6)), ("W_k", normal(6, 2, scale=0.6)), ("W_v", normal(6, 5))),
            ),
            Probe(
                "float32 in, float32 out",
                2,
                (("x", normal(7, 8)), ("W_q", normal(8, 4, scale=0.5)), ("W_k", normal(8, 4, scale=0.5)), ("W_v", normal(8, 4))),
                checks=("dtype_kept", "matches_reference"),
                **F32,
            ),
            Probe("stays on the inputs' device (meta tensors)", 1, (("x", normal(2, 5, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 2))), **META),
        ),
        reference="self_attention",
        outputs=("out", "weights"),
        forbidden=FORBIDDEN,
        cuda=True,
        builds_on=("c3", "c4"),
    ),
    Task(
        name="c6",
        function="decode_with_kv_cache",
        framework="torch",
        title="Decoding with a key/value cache (PyTorch)",
        prompt="""At decode time a model emits one token at a time. Recomputing every key and value at each step
repeats work; a cache keeps the past keys and values, so each new token costs $O(T)$ against the past
(note 3.1 §3, §6; inference only, training cost is unchanged).

Write `decode_with_kv_cache(x, W_q, W_k, W_v)`: go through `x (..., T, d_model)` token by token; at step
$t$ project **only** token $t$ to its query, key and value, append the key and value to the cache, and
attend from that one query to every cached key. Return the outputs `(..., T, d_v)`; they must equal
`self_attention(x, W_q, W_k, W_v, causal=True)[0]`. Each past token must be projected once (an advisory
probe counts projections).""",
        starter='''def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    # BEGIN SOLUTION
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]  # (..., 1, d_model): the newest token only
        keys.append(x_t @ W_k)  # projected once, then kept
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        outputs.append(out_t)  # (..., 1, d_v)
    return torch.cat(outputs, dim=-2)
    # END SOLUTION''',
        example=_example_decode(),
        public_checks=(
            '''def test_c6_shape(decode_with_kv_cache):
    import torch
    g = torch.Generator().manual_seed(3)
    x, W = torch.randn(2, 4, 6, generator=g), torch.randn(6, 5, generator=g)
    out = decode_with_kv_cache(x, W, W, W)
    assert tuple(out.shape) == (2, 4, 5), "outputs should be (..., T, d_v)"
    assert torch.allclose(out[:, 0], x[:, 0] @ W, atol=1e-5), "the first token attends only to itself"
''',
            _check_decode_example(),
        ),
        probes=(
            Probe(
                "equals full causal self-attention at every step (B=2, T=7)",
                4,
                (("x", normal(2, 7, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4))),
            ),
            Probe("a single token (T = 1)", 1, (("x", normal(1, 1, 4)), ("W_q", normal(4, 2)), ("W_k", normal(4, 2)), ("W_v", normal(4, 3)))),
            Probe(
                "float32 in, float32 out",
                2,
                (("x", normal(6, 4)), ("W_q", normal(4, 4, scale=0.6)), ("W_k", normal(4, 4, scale=0.6)), ("W_v", normal(4, 4))),
                checks=("dtype_kept", "matches_reference"),
                **F32,
            ),
            Probe("stays on the inputs' device (meta tensors)", 1, (("x", normal(2, 4, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 2))), **META),
            Probe(
                "advisory: each token's key and value projected once (T = 8)",
                2,
                (("x", normal(2, 8, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 3))),
                checks=("matches_reference", "projected_once"),
                options={"count_projections": ["W_k", "W_v"]},
            ),
        ),
        reference="decode_with_kv_cache",
        forbidden=FORBIDDEN,
        cuda=True,
        builds_on=("c3",),
    ),
    Task(
        name="c7",
        function="sliding_window_mask",
        framework="torch",
        title="A sliding-window mask (PyTorch)",
        prompt="""When $T^2$ no longer fits you change the pattern (note 3.1 §3, §6). Write
`sliding_window_mask(T, window, device=None)`: a `(T, T)` bool tensor where query $i$ may attend keys
$i - \\text{window} + 1, \\dots, i$ (`window` keys, itself included; fewer near the start).

It allows $T w - w(w-1)/2$ scores instead of $T(T+1)/2$. A dense mask still computes all $T^2$ scores,
though: the saving needs a kernel that skips the masked blocks (the reference's `chunked_attention` shows
the tiling idea).""",
        starter='''def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    # BEGIN SOLUTION
    i = torch.arange(T, device=device)[:, None]  # queries, as a column
    j = torch.arange(T, device=device)[None, :]  # keys, as a row
    return (j <= i) & (j > i - window)
    # END SOLUTION''',
        example=_example_window(),
        public_checks=(
            '''def test_c7_counts(sliding_window_mask):
    import torch
    m = sliding_window_mask(8, 3)
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, "return a bool tensor"
    assert m.shape == (8, 8), "shape should be (T, T)"
    assert m.sum().item() == 8 * 3 - 3, "T*w - w(w-1)/2 allowed pairs"
    assert m.diagonal().all(), "every token may attend to itself"
''',
            _check_window_example(),
        ),
        probes=(
            Probe("T = 7, window = 3", 3, (("T", value(7)), ("window", value(3))), checks=("matches_reference", "bool_dtype")),
            Probe("window = 1: each token sees only itself", 2, (("T", value(6)), ("window", value(1)))),
            Probe("window >= T is the causal mask", 2, (("T", value(5)), ("window", value(9)))),
            Probe("bool dtype (T = 10, window = 4)", 2, (("T", value(10)), ("window", value(4))), checks=("bool_dtype", "matches_reference")),
            Probe("created on the requested device (meta)", 1, (("T", value(4)), ("window", value(2)), DEVICE_ARG), **META),
        ),
        reference="sliding_window_mask",
        outputs=("mask",),
    ),
    Task(
        name="c8",
        function="rnn_gradient_norm",
        framework="torch",
        title="The RNN's fading gradient, by autograd (PyTorch)",
        prompt="""Week 2's Jacobian product, measured (note 3.1 §2). For the scalar recurrence
$h_t = \\text{factor}\\cdot h_{t-1} + x_t$, write `rnn_gradient_norm(T, factor)` returning
$|\\partial h_T / \\partial h_1|$ as a Python float, **computed by autograd**: make $h_1$ a tensor with
`requires_grad=True`, run the recurrence for $t = 2 \\dots T$ (any inputs $x_t$), and backpropagate.
Compare your numbers with $\\text{factor}^{T-1}$ and with attention's single hop.""",
        starter='''def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    # BEGIN SOLUTION
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + torch.randn((), dtype=torch.float64)  # x_t does not change the gradient
    h.backward()  # for T = 1, h is h_1 and the gradient is 1
    return abs(h_1.grad.item())
    # END SOLUTION''',
        example=_example_rnn(),
        public_checks=(
            '''def test_c8_is_a_float_below_one(rnn_gradient_norm):
    g = rnn_gradient_norm(10, 0.9)
    assert isinstance(g, float), "return a Python float (use .item())"
    assert 0 < g < 1, "with factor 0.9 the gradient shrinks"
''',
            _check_rnn_example(),
        ),
        probes=tuple(
            Probe(name, points, (("T", value(T)), ("factor", value(factor))), checks=checks, options=SCALAR_TOLERANCE)
            for name, points, T, factor, checks in (
                ("T = 50, factor = 0.9", 4, 50, 0.9, ("matches_reference",)),
                ("T = 1: no steps, gradient 1", 2, 1, 0.9, ("matches_reference",)),
                ("T = 20, factor = 1.1: the product grows, by autograd", 2, 20, 1.1, ("matches_reference", "autograd_used")),
                ("T = 40, factor = 0.5", 2, 40, 0.5, ("matches_reference",)),
            )
        ),
        reference="rnn_jacobian_norm",
        outputs=("norm",),
    ),
)


# Exploration: what the lab draws from the student's own functions (skipped while grading).
PLOTS_INTRO = """## Exploration: what your functions show

These cells use **your** functions, so they work once the tasks above do. They are skipped while grading.
1. The attention weights of a toy sentence *The cat … it*: where does *it* look?
2. Time and memory of full attention for $T = 256 \\dots 4096$ beside the $T^2$ curve (note 3.1 §3–§4): each
   time is the median of five runs after a warm-up, so the slope on the log-log plot is close to 2.
3. $|\\partial h_T / \\partial h_1|$ against $T$ for factor 0.9, beside attention's single hop (§2)."""

PLOT_HEATMAP = """# Toy embeddings: "it" is built to resemble "cat", so its query should find cat's key.
words = ["The", "cat", "sat", "on", "the", "mat", "because", "it"]
g = torch.Generator().manual_seed(0)
emb = torch.randn(len(words), 16, generator=g)
emb[7] = emb[1] + 0.3 * torch.randn(16, generator=g)  # "it" ≈ "cat"
try:
    _, w = self_attention(emb, torch.eye(16), torch.eye(16), torch.eye(16), causal=True)
    fig, ax = plt.subplots(figsize=(5, 4))
    im = ax.imshow(w.detach().numpy(), cmap="viridis")
    ax.set_xticks(range(len(words)), words, rotation=45)
    ax.set_yticks(range(len(words)), words)
    ax.set_xlabel("key"); ax.set_ylabel("query"); ax.set_title("Causal self-attention weights")
    fig.colorbar(im); plt.show()
    print(f"'it' puts {w[7, 1]:.2f} of its weight on 'cat'")
except Exception as err:  # your c3-c5 are not ready yet
    print("self_attention is not ready yet:", repr(err))"""

PLOT_COST = """# Full attention for T = 256 ... 4096: wall time (warm-up, then the median of 5 runs) and the T x T weights.
Ts, seconds, map_bytes = [256, 512, 768, 1536, 3072, 4096], [], []
threads = torch.get_num_threads()
torch.set_num_threads(1)  # one thread: times that follow the work, not the scheduler
try:
    for T in Ts:
        q = k = v = torch.randn(1, T, 64)
        scaled_dot_product_attention(q, k, v)  # warm-up: the first call pays for allocation
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            _, w = scaled_dot_product_attention(q, k, v)
            runs.append(time.perf_counter() - start)
        seconds.append(sorted(runs)[len(runs) // 2])
        map_bytes.append(w.element_size() * w.nelement())
        del w
    large = [(T, s) for T, s in zip(Ts, seconds) if T >= 512]
    slope = np.polyfit(np.log([T for T, _ in large]), np.log([s for _, s in large]), 1)[0]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.5))
    a1.loglog(Ts, seconds, "o-", label=f"measured (median of 5), slope {slope:.2f}")
    a1.loglog(Ts, [seconds[-1] * (T / Ts[-1]) ** 2 for T in Ts], "--", label="∝ T² (slope 2)")
    a1.set_xlabel("T"); a1.set_ylabel("seconds"); a1.legend()
    a2.loglog(Ts, map_bytes, "o-", label="weights tensor (measured: element_size · numel)")
    a2.loglog(Ts, [4 * T**2 for T in Ts], "--", label="4·T² bytes (formula)")
    a2.set_xlabel("T"); a2.set_ylabel("bytes"); a2.legend()
    plt.tight_layout(); plt.show()
    for T, s, b in zip(Ts, seconds, map_bytes):
        print(f"T = {T:5d}: {s * 1e3:8.2f} ms, weights map {b / 1e6:8.2f} MB")
    print(f"fitted slope of time against T for T >= 512: {slope:.2f} (T² has slope 2)")
except Exception as err:
    print("scaled_dot_product_attention is not ready yet:", repr(err))
finally:
    torch.set_num_threads(threads)"""

PLOT_GRADIENT = """# The RNN path multiplies T - 1 factors; attention reaches token 1 in one hop.
try:
    Ts = list(range(1, 61))
    norms = [rnn_gradient_norm(T, 0.9) for T in Ts]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.semilogy(Ts, norms, label="RNN: |∂h_T/∂h_1| (factor 0.9)")
    ax.semilogy(Ts, [1.0] * len(Ts), "--", label="attention: one hop")
    ax.set_xlabel("T"); ax.legend(); plt.show()
    print(f"T = 20: {norms[19]:.4f}   T = 30: {norms[29]:.4f}: the product shrinks geometrically")
except Exception as err:
    print("rnn_gradient_norm is not ready yet:", repr(err))"""

PLOTS = (PLOT_HEATMAP, PLOT_COST, PLOT_GRADIENT)
TIMING_PLOTS = (PLOT_COST,)  # outputs that hold measured timings (differ between builds)
