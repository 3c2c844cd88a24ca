# idiom: reduce without keepdims, restore the axis with np.expand_dims, np.subtract/np.divide ufuncs (self-contained)
def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    x = np.asarray(x)
    biggest = np.expand_dims(np.max(x, axis=axis), axis)
    numer = np.exp(np.subtract(x, biggest))
    denom = np.expand_dims(np.sum(numer, axis=axis), axis)
    return np.divide(numer, denom)
