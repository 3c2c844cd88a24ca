"""c3: scaled dot-product attention (PyTorch), note 3.1 §4."""

import numpy as np

import attn_ref
from attn_ref.release.units import F32, META, Probe, Task, drawn, mask, normal, shown_tensor

HINT = ("which dimension is your d_k read from, for inputs of any number of leading dimensions, and which axis "
        "does your softmax run over?")
LARGE_SCORES = ("these scores are in the hundreds, where exp overflows to inf: subtract each row's max score before "
                "exp (the softmax does not change)")

TASK = Task(
    name="c3",
    function="scaled_dot_product_attention",
    framework="torch",
    title="Scaled dot-product attention (PyTorch)",
    reference="attn_ref.attention:scaled_dot_product_attention",
    outputs=("out", "weights"),
    forbidden=("torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention", "attn_ref"),
    cuda=True,
    probes=(
        Probe("no mask: B, H, T_q ≠ T_k, d_k ≠ d_v drawn per grading", 2,
              (("q", normal("B", "H", "T_q", "d_k")), ("k", normal("B", "H", "T_k", "d_k")), ("v", normal("B", "H", "T_k", "d_v"))),
              options={**drawn(B=(1, 3), H=(1, 3), T_q=(2, 9), T_k=(2, 9), d_k=(2, 8), d_v=(2, 8)),  # all six differ
                       "hints": {"matches_reference": HINT}}),
        Probe("float64 precision kept (the keys share a large component)", 1,
              (("q", normal(2, 5, 3)), ("k", normal(2, 7, 3, common=1e4)), ("v", normal(2, 7, 3))),
              checks=("dtype_kept", "precision_kept")),
        Probe("bool mask, True = may attend; masked weights exactly 0", 1,
              (("q", normal(2, 6, 4)), ("k", normal(2, 8, 4)), ("v", normal(2, 8, 3)), ("mask", mask(6, 8))),
              checks=("matches_reference", "masked_weights_zero")),
        Probe("leaves q, k, v and the mask unchanged", 1,
              (("q", normal(2, 6, 4)), ("k", normal(2, 8, 4)), ("v", normal(2, 8, 3)), ("mask", mask(6, 8))),
              checks=("inputs_unchanged",)),
        # scores in the hundreds: exp overflows to inf (and inf/inf is NaN) unless each row's max is subtracted.
        # Only finiteness and the weights' sums are checked here, not the values: at this scale the softmax is
        # nearly one-hot, and whether two near-one-hot answers agree depends on the draw, not on the code (the
        # seed sweep of `attn-ref check` saw a d-for-√d scaling pass 10 of 11 seeds and float32 internals fail 1.3 %
        # of them). The scale and float32 mistakes are charged on their own lines, under every seed.
        Probe("large scores (hundreds): the softmax stays finite", 1,
              (("q", normal(2, 5, 8, scale=30.0)), ("k", normal(2, 6, 8, scale=30.0)), ("v", normal(2, 6, 3))),
              checks=("finite", "rows_sum_to_one"), options={"hints": {"finite": LARGE_SCORES}}),
        # Masking after the softmax gives the empty row its zeros and is right wherever every other row lets every key
        # through: with 3 such rows of 5 keys at p = 0.7 that was 0.7^15 ≈ 1 draw in 200 (8 of 1,500 seeds passed it);
        # 5 rows at p = 0.5 make it 2^-25.
        Probe("a fully masked row gives zero weights and output, not NaN", 1,
              (("q", normal(6, 3)), ("k", normal(5, 3)), ("v", normal(5, 2)), ("mask", mask(6, 5, p=0.5, empty_rows=(1,)))),
              checks=("finite", "matches_reference")),
        Probe("a (B, 1, T_q, T_k) mask broadcasts over heads (B = H = 2)", 1,
              (("q", normal(2, 2, 5, 4)), ("k", normal(2, 2, 5, 4)), ("v", normal(2, 2, 5, 3)), ("mask", mask(2, 1, 5, 5)))),
        Probe("float32 in, float32 out", 1, (("q", normal(3, 5, 8)), ("k", normal(3, 6, 8)), ("v", normal(3, 6, 8))),
              checks=("dtype_kept", "matches_reference"), **F32),
        Probe("stays on the inputs' device (meta tensors)", 1,
              (("q", normal(2, 5, 4)), ("k", normal(2, 5, 4)), ("v", normal(2, 5, 3)), ("mask", mask(5, 5, p=0.7))), **META),
    ),
)


def example() -> str:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    _, weights = attn_ref.scaled_dot_product_attention(q, k, np.eye(3))
    return f"""```python
>>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
>>> k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
>>> out, weights = scaled_dot_product_attention(q, k, torch.eye(3))
>>> weights            # (T_q, T_k) = (2, 3); with v = I, out equals weights
{shown_tensor(weights)}
```"""
