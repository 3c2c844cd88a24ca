# idiom: copy x first, then in-place ops (-=, np.exp(out=), /=) on the private copy only (self-contained)
def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    out = np.array(x, copy=True)
    out -= np.amax(out, axis=axis, keepdims=True)
    np.exp(out, out=out)
    out /= np.sum(out, axis=axis, keepdims=True)
    return out
