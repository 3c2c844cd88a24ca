def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    # BEGIN SOLUTION
    shifted = x - np.max(x, axis=axis, keepdims=True)  # every exponent <= 0: no overflow
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)
    # END SOLUTION
