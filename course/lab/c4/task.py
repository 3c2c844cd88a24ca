"""c4: a causal mask (PyTorch), note 3.1 §4."""

import attn_ref
from attn_ref.release.units import DEVICE, META, Probe, Task, shown_tensor, value

TASK = Task(
    name="c4",
    function="causal_mask",
    framework="torch",
    title="A causal mask (PyTorch)",
    reference="attn_ref.masks:causal_mask",
    outputs=("mask",),
    probes=(
        Probe("T = 5", 4, (("T", value(5)),), checks=("matches_reference", "bool_dtype"),
              options={"hints": {"matches_reference": "may query i attend to key i itself, and to no key after it?"}}),
        Probe("T = 1", 2, (("T", value(1)),)),
        Probe("T = 70, bool dtype", 3, (("T", value(70)),), checks=("bool_dtype", "matches_reference")),
        # What a meta tensor reports is the kernel's word: one point (docs/security.md, "The kernel's word").
        Probe("created on the requested device (meta)", 1, (("T", value(4)), DEVICE), **META),
    ),
)


def example() -> str:
    return f"""```python
>>> causal_mask(4).int()
{shown_tensor(attn_ref.causal_mask(4), "int32")}
```"""
