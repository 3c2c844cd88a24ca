# idiom: np.moveaxis the softmax axis to the end, work on axis -1 with [..., None], move it back (self-contained)
def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    y = np.moveaxis(x, axis, -1)
    y = y - y.max(axis=-1)[..., None]
    y = np.exp(y)
    y = y / y.sum(axis=-1)[..., None]
    return np.moveaxis(y, -1, axis)
