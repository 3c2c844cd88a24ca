"""c1: a numerically stable softmax (NumPy), note 3.1 §4."""

import numpy as np

import attn_ref
from attn_ref.release.units import F32, Probe, Task, normal, shown, value

# what to check when the main line fails (a question, never the answer)
HINT = "is every max and sum taken along `axis`, with keepdims=True, and does each slice sum to 1?"

TASK = Task(
    name="c1",
    function="softmax",
    framework="numpy",
    title="A numerically stable softmax (NumPy)",
    reference="attn_ref.attention:softmax",
    probes=(
        Probe("matches the reference on random logits (4 × 7, axis=-1)", 3, (("x", normal(4, 7, scale=3.0)),),
              options={"hints": {"matches_reference": HINT}}),
        Probe("works along axis=1 of a 3-D array", 1, (("x", normal(3, 4, 5, scale=3.0)), ("axis", value(1)))),
        # Axis 1 is the last axis of 2-D input, so only a leading axis tells "the axis it is given" from
        # "always axis 1".
        Probe("works along axis=0 of a 3-D array", 1, (("x", normal(4, 3, 5, scale=3.0)), ("axis", value(0)))),
        # 8 rows: a max taken over the whole array instead of each row is right only when every row's max is
        # within ~745 (where exp underflows) of the largest, under about 3e-9 of draws (3 rows: ~0.6 %, seen by the sweep)
        # A softmax computed in float32 is charged on "float64 in, float64 out" alone: rounding logits of up to 6e4
        # (6 sigma) to float32 moves a gap between two of them by at most 2 · 6e4 · 2^-24 ≈ 7e-3, and a weight by a
        # quarter of that, 2e-3, so 1e-2 holds it under every draw (at 1e-5 it failed under 4 of 1,500 seeds: charged
        # twice, by chance); a softmax that overflows, or takes one max for every row, misses by O(1).
        Probe("logits of ±1e4 give no NaN or inf", 2, (("x", normal(8, 6, scale=1e4)),), checks=("finite", "matches_reference"),
              options={"rtol": 1e-2, "atol": 1e-2}),
        Probe("leaves its input unchanged", 1, (("x", normal(5, 5)),), checks=("inputs_unchanged", "matches_reference")),
        Probe("float64 in, float64 out", 1, (("x", normal(6, 3, scale=3.0)),), checks=("dtype_kept", "matches_reference")),
        Probe("float32 in, float32 out", 1, (("x", normal(4, 6, scale=3.0)),), checks=("dtype_kept", "matches_reference"), **F32),
    ),
)


def example() -> str:
    x = np.array([1.0, 2.0, 3.0])
    return f"""```python
>>> softmax(np.array([1.0, 2.0, 3.0]))
{shown(attn_ref.softmax(x))}
>>> softmax(np.array([1000.0, 1001.0, 1002.0]))   # the same: softmax ignores a shift
{shown(attn_ref.softmax(x + 1000))}
```"""
