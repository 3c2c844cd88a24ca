"""c6: decoding with a key/value cache (PyTorch), note 3.1 §3 and §6."""

import numpy as np

import attn_ref
from attn_ref.release.units import F32, META, Probe, Task, drawn, normal, shown_tensor

TASK = Task(
    name="c6",
    function="decode_with_kv_cache",
    framework="torch",
    title="Decoding with a key/value cache (PyTorch)",
    reference="attn_ref.decoding:decode_with_kv_cache",
    forbidden=("torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention", "attn_ref"),
    cuda=True,
    builds_on=("c3", "c4"),
    probes=(
        # d_v ≥ d_k + 2 under every draw: a fused key/value projection split at its middle is right when
        # d_v = d_k + 1, (2·d_k + 1) // 2 = d_k, and the seed sweep saw it pass here under 2 of 11 seeds.
        # T ≥ 4: scores divided by √(t + 1) for √d_k are right where t + 1 = d_k, so with T = 3 a single step
        # differed, and the sweep saw that pass under 1 seed in 1,500 (T ≥ 4: no pass in 20,000 draws).
        Probe("equals full causal self-attention at every step (B, T, sizes drawn per grading)", 3,
              (("x", normal("B", "T", "d_model")), ("W_q", normal("d_model", "d_k", scale=0.6)),
               ("W_k", normal("d_model", "d_k", scale=0.6)), ("W_v", normal("d_model", "d_v"))),
              options={**drawn(B=(1, 3), T=(4, 9), d_model=(2, 8), d_k=(2, 3), d_v=(5, 6)),
                       "hints": {"matches_reference": "at step t, does the cache hold exactly keys 0 … t, each once, when "
                                                      "the query attends?"}}),
        Probe("leaves x and the weights unchanged", 1,
              (("x", normal(2, 7, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4))),
              checks=("inputs_unchanged",)),
        Probe("a single token (T = 1)", 1, (("x", normal(1, 1, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 2)))),
        # called twice on the same inputs, the second result graded: a cache kept between calls shows
        Probe("float64 in, float64 out; a second call starts from an empty cache (the same inputs twice)", 1,
              (("x", normal(2, 7, 5)), ("W_q", normal(5, 3, scale=0.6)), ("W_k", normal(5, 3, scale=0.6)), ("W_v", normal(5, 4))),
              checks=("dtype_kept", "matches_reference"), options={"calls": 2}),
        Probe("float32 in, float32 out", 1,
              (("x", normal(6, 4)), ("W_q", normal(4, 4, scale=0.6)), ("W_k", normal(4, 4, scale=0.6)), ("W_v", normal(4, 4))),
              checks=("dtype_kept", "matches_reference"), **F32),
        Probe("stays on the inputs' device (meta tensors)", 1,
              (("x", normal(2, 4, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 2))), **META),
        # Counted in the kernel (its word: one point); values are graded on the lines above, so a value
        # error is never charged here again.
        Probe("each token's key and value projected once (T = 8), as your kernel counts", 1,
              (("x", normal(2, 8, 4)), ("W_q", normal(4, 3)), ("W_k", normal(4, 3)), ("W_v", normal(4, 3))),
              checks=("projected_once",), options={"count_projections": ["W_k", "W_v"]}),
        # x (..., T, d_model): the lines above are 2-D and 3-D only, which code that reads the tokens along
        # dimension 1 passes. Appended last, so every earlier line keeps its seed; a point of the first line.
        Probe("extra leading dimensions (2, 3, T, d_model)", 1,
              (("x", normal(2, 3, 5, 4)), ("W_q", normal(4, 3, scale=0.6)), ("W_k", normal(4, 3, scale=0.6)), ("W_v", normal(4, 2)))),
    ),
)

X = np.arange(6.0).reshape(3, 2) / 6  # c5's example


def example() -> str:
    out = attn_ref.decode_with_kv_cache(X, np.eye(2), np.eye(2), np.eye(2))
    return f"""```python
>>> decode_with_kv_cache(x, torch.eye(2), torch.eye(2), torch.eye(2))   # x from c5
{shown_tensor(out)}
>>> # the same as self_attention(x, ..., causal=True)[0]
```"""
