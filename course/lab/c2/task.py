"""c2: Bahdanau's additive attention (NumPy), note 3.1 §4–§5."""

import numpy as np

import attn_ref
from attn_ref.release.units import F32, Probe, Task, drawn, normal, shown

HINT = "where does your tanh sit: on W_q q + W_k h_i, inside the dot product with v, and nowhere else?"

TASK = Task(
    name="c2",
    function="additive_attention",
    framework="numpy",
    title="Bahdanau's additive attention (NumPy)",
    reference="attn_ref.attention:additive_attention",
    outputs=("context", "weights"),
    builds_on=("c1",),
    probes=(
        Probe("matches the reference (d_q ≠ d_k ≠ d_a and T drawn per grading)", 3,
              (("query", normal("d_q")), ("keys", normal("T", "d_k")), ("W_q", normal("d_a", "d_q", scale=0.7)),
               ("W_k", normal("d_a", "d_k", scale=0.7)), ("v", normal("d_a"))),
              options={**drawn(d_q=(2, 6), d_k=(2, 6), d_a=(2, 6), T=(2, 9)),
                       "hints": {"matches_reference": HINT}}),
        Probe("leaves query, keys and the weights unchanged", 1,
              (("query", normal(3)), ("keys", normal(6, 5)), ("W_q", normal(4, 3, scale=0.7)), ("W_k", normal(4, 5, scale=0.7)),
               ("v", normal(4))),
              checks=("inputs_unchanged",)),
        # a zero query, so each score is v · tanh(W_k h_i) of its own key alone: the keys are drawn symmetric and
        # independent, so each score's sign is a fair coin of its own, and 40 scores all of one sign (where
        # scores divided by their sum would pass) happen under one seed in 2^39: the verdict is the seed's in
        # no seed a class will meet. With a random query the shared W_q q tipped every score one way often.
        Probe("weights are non-negative and sum to 1", 2,
              (("query", normal(2, scale=0.0)), ("keys", normal(40, 3)), ("W_q", normal(5, 2)), ("W_k", normal(5, 3)),
               ("v", normal(5))),
              checks=("rows_sum_to_one",)),
        Probe("one encoder state: weight 1 and context = that state", 2,
              (("query", normal(4)), ("keys", normal(1, 3)), ("W_q", normal(2, 4)), ("W_k", normal(2, 3)), ("v", normal(2)))),
        Probe("float64 in, float64 out", 1,
              (("query", normal(5)), ("keys", normal(4, 3)), ("W_q", normal(3, 5, scale=0.7)), ("W_k", normal(3, 3, scale=0.7)),
               ("v", normal(3))),
              checks=("dtype_kept", "matches_reference")),
        Probe("float32 in, float32 out", 1,
              (("query", normal(3)), ("keys", normal(5, 4)), ("W_q", normal(6, 3, scale=0.7)), ("W_k", normal(6, 4, scale=0.7)),
               ("v", normal(6))),
              checks=("dtype_kept", "matches_reference"), **F32),
    ),
)

KEYS = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # three encoder states h_i


def example() -> str:
    context, weights = attn_ref.additive_attention(np.array([1.0, 0.0]), KEYS, np.eye(2), np.eye(2), np.ones(2))
    return f"""```python
>>> keys = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])   # three encoder states h_i
>>> context, weights = additive_attention(np.array([1.0, 0.0]), keys, np.eye(2), np.eye(2), np.ones(2))
>>> weights
{shown(weights)}
>>> context
{shown(context)}
```"""
