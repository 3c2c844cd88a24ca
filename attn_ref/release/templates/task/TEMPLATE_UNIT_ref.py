"""The reference of TEMPLATE_UNIT: what the hidden checks compare the student's TEMPLATE_FUNCTION with.

`attn-ref new` wrote an example (centring an array along an axis): replace it with your task's plain,
obviously right version. The grader runs this file on its own, so it uses only NumPy and the standard
library; it gets NumPy arrays (floats as float64) and returns one value, or a tuple in the task's
`outputs` order.
"""

import numpy as np


def TEMPLATE_FUNCTION(x, axis=-1):
    """x minus its mean along axis: every slice along axis then has mean 0."""
    return x - np.mean(x, axis=axis, keepdims=True)
