"""c8: the RNN's fading gradient, by autograd (PyTorch), note 3.1 §2."""

import attn_ref
from attn_ref.release.units import Probe, Task, value

# A float32 autograd chain of 49 steps drifts ~3e-6 relative: accept it, reject any off-by-one (10 %).
SCALAR_TOLERANCE = {"rtol": 1e-5, "atol": 0.0}

TASK = Task(
    name="c8",
    function="rnn_gradient_norm",
    framework="torch",
    title="The RNN's fading gradient, by autograd (PyTorch)",
    reference="attn_ref.costs:rnn_jacobian_norm",  # the closed form: the grader never imports torch
    outputs=("norm",),
    probes=(
        Probe("T = 50, factor = 0.9", 3, (("T", value(50)), ("factor", value(0.9))),
              options={**SCALAR_TOLERANCE, "hints": {"matches_reference": "how many steps lie between h_1 and h_T, and does the gradient flow through every one of them?"}}),
        Probe("T = 1: no steps, gradient 1", 2, (("T", value(1)), ("factor", value(0.9))), options=SCALAR_TOLERANCE),
        # "By autograd" is the kernel's own word (a flag it reports; any unrelated backward() sets it): one point
        # at most. The values are what is graded.
        Probe("T = 20, factor = 1.1: the product grows, by autograd (as your kernel reports)", 1,
              (("T", value(20)), ("factor", value(1.1))), checks=("matches_reference", "autograd_used"),
              options=SCALAR_TOLERANCE),
        # (-0.9)^19 < 0: the signed gradient is negative, its absolute value is what is asked
        Probe("T = 20, factor = -0.9: a negative factor, an odd number of steps", 2,
              (("T", value(20)), ("factor", value(-0.9))), options=SCALAR_TOLERANCE),
        Probe("T = 40, factor = 0.5", 1, (("T", value(40)), ("factor", value(0.5))), options=SCALAR_TOLERANCE),
        # 99 float32 steps drift up to ~6e-6: a looser tolerance that still rejects an off-by-one (25 %).
        Probe("T = 100, factor = 0.8: a long chain", 1, (("T", value(100)), ("factor", value(0.8))),
              options={"rtol": 1e-4, "atol": 0.0}),
    ),
)


def example() -> str:
    return f"""```python
>>> rnn_gradient_norm(3, 0.5)     # two steps: 0.5 · 0.5
{attn_ref.rnn_jacobian_norm(3, 0.5)}
>>> rnn_gradient_norm(11, 0.8)    # ten steps of 0.8
{attn_ref.rnn_jacobian_norm(11, 0.8):.6f}
```"""
