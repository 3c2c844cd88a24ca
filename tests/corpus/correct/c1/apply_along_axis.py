# idiom: a 1-D stable softmax applied to every slice with np.apply_along_axis (self-contained)
def _softmax_1d(row):
    z = row - np.max(row)
    ez = np.exp(z)
    return ez / np.sum(ez)


def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    return np.apply_along_axis(_softmax_1d, axis, x)
