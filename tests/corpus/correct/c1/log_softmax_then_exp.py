# idiom: log-softmax first (x - m - log(sum exp(x - m))), then exponentiate; np.max / np.log / np.exp (self-contained)
def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    z = x - np.max(x, axis=axis, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
    return np.exp(log_probs)
