"""c5: one head of self-attention (PyTorch), note 3.1 §1."""

import numpy as np

import attn_ref
from attn_ref.release.units import F32, META, Probe, Task, drawn, normal, shown_tensor, value

TASK = Task(
    name="c5",
    function="self_attention",
    framework="torch",
    title="One head of self-attention (PyTorch)",
    reference="attn_ref.attention:self_attention",
    outputs=("out", "weights"),
    forbidden=("torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention", "attn_ref"),
    cuda=True,
    builds_on=("c3", "c4"),
    probes=(
        Probe("causal (default): B, T, d_model, d_k ≠ d_v drawn per grading", 2,
              (("x", normal("B", "T", "d_model")), ("W_q", normal("d_model", "d_k", scale=0.6)),
               ("W_k", normal("d_model", "d_k", scale=0.6)), ("W_v", normal("d_model", "d_v"))),
              options={**drawn(B=(1, 3), T=(3, 9), d_model=(2, 8), d_k=(2, 6), d_v=(2, 6)),
                       "hints": {"matches_reference": "is the causal mask used when causal is True, and is the scale applied once?"}}),
        Probe("leaves x and the weights unchanged", 1,
              (("x", normal(2, 6, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4))),
              checks=("inputs_unchanged",)),
        Probe("causal=False attends to every token", 2,
              (("x", normal(2, 6, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4)),
               ("causal", value(False)))),
        Probe("extra leading dimensions (2, 3, T, d_model)", 2,
              (("x", normal(2, 3, 4, 6)), ("W_q", normal(6, 2, scale=0.6)), ("W_k", normal(6, 2, scale=0.6)), ("W_v", normal(6, 5)))),
        Probe("float64 in, float64 out", 1,
              (("x", normal(5, 6)), ("W_q", normal(6, 3, scale=0.5)), ("W_k", normal(6, 3, scale=0.5)), ("W_v", normal(6, 2))),
              checks=("dtype_kept", "matches_reference")),
        Probe("float32 in, float32 out", 1,
              (("x", normal(7, 8)), ("W_q", normal(8, 4, scale=0.5)), ("W_k", normal(8, 4, scale=0.5)), ("W_v", normal(8, 4))),
              checks=("dtype_kept", "matches_reference"), **F32),
        Probe("stays on the inputs' device (meta tensors)", 1,
              (("x", normal(2, 5, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 2))), **META),
    ),
)

X = np.arange(6.0).reshape(3, 2) / 6


def example() -> str:
    _, weights = attn_ref.self_attention(X, np.eye(2), np.eye(2), np.eye(2))
    return f"""```python
>>> x = torch.arange(6.0).reshape(3, 2) / 6
>>> out, weights = self_attention(x, torch.eye(2), torch.eye(2), torch.eye(2))
>>> weights
{shown_tensor(weights)}
```"""
