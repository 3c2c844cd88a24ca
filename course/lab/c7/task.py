"""c7: a sliding-window mask (PyTorch), note 3.1 §3 and §6."""

import attn_ref
from attn_ref.release.units import DEVICE, META, Probe, Task, shown_tensor, value

TASK = Task(
    name="c7",
    function="sliding_window_mask",
    framework="torch",
    title="A sliding-window mask (PyTorch)",
    reference="attn_ref.masks:sliding_window_mask",
    outputs=("mask",),
    probes=(
        Probe("T = 7, window = 3", 3, (("T", value(7)), ("window", value(3))), checks=("matches_reference", "bool_dtype"),
              options={"hints": {"matches_reference": "is your window counting itself: window keys in all, the query "
                                                     "included, and none after it?"}}),
        Probe("window = 1: each token sees only itself", 2, (("T", value(6)), ("window", value(1)))),
        Probe("window >= T is the causal mask", 2, (("T", value(5)), ("window", value(9)))),
        Probe("bool dtype (T = 10, window = 4)", 2, (("T", value(10)), ("window", value(4))), checks=("bool_dtype", "matches_reference")),
        Probe("created on the requested device (meta)", 1, (("T", value(4)), ("window", value(2)), DEVICE), **META),
    ),
)


def example() -> str:
    mask = attn_ref.sliding_window_mask(5, 2)
    return f"""```python
>>> sliding_window_mask(5, 2).int()       # each query sees itself and one key back
{shown_tensor(mask, "int32")}
>>> sliding_window_mask(5, 2).sum()       # T·w − w(w−1)/2 = {5 * 2 - 1}
{shown_tensor(mask.sum())}
```"""
