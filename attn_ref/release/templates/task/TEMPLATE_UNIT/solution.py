import numpy as np


def TEMPLATE_FUNCTION(x, axis=-1):
    """x minus its mean along axis.

    x: a NumPy array of floats. Returns an array of x's shape whose slices along axis have mean 0.
    """
    # BEGIN SOLUTION
    return x - np.mean(x, axis=axis, keepdims=True)
    # END SOLUTION
