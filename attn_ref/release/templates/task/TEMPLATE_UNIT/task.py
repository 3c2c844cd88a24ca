"""TEMPLATE_UNIT: a function task, probed against its reference (../TEMPLATE_UNIT_ref.py) on random inputs.

`attn-ref new` wrote an example; replace it with yours, file by file: prompt.md (what students read),
solution.py (your solution; students get its signature and docstring), this file (the hidden probes),
public_checks.py (what `grader.check` runs), mutants/ (wrong versions the probes must catch). Then
`attn-ref build --only TEMPLATE_ASSIGNMENT` builds and checks it. Every field: docs/instructors.md, "The authoring reference".
"""

import numpy as np
import TEMPLATE_UNIT_ref

from attn_ref.release.units import Probe, Task, normal, shown, value

TASK = Task(
    name="TEMPLATE_UNIT",
    function="TEMPLATE_FUNCTION",
    framework="numpy",
    title="Centre an array along an axis",
    reference="TEMPLATE_UNIT_ref:TEMPLATE_FUNCTION",
    probes=(
        # the general case: random inputs, several rows (no placeholder, zeros, ones or x echoed, passes it)
        Probe("rows of a 4 × 6 array", 2, (("x", normal(4, 6)),)),
        # an argument other than its default, on a shape whose axes differ
        Probe("along axis=0 of a 5 × 3 array", 1, (("x", normal(5, 3)), ("axis", value(0)))),
    ),
)


def example() -> str:
    """The worked example under the prompt, computed with the reference at build time."""
    x = np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]])
    return f"""```python
>>> TEMPLATE_FUNCTION(np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]]))
{shown(TEMPLATE_UNIT_ref.TEMPLATE_FUNCTION(x))}
```"""
