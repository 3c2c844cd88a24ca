# idiom: scipy-free log-sum-exp: log Z = log(sum(exp(x - m))) kept relative to the max m, then exp((x - m) - log Z) (self-contained)
def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    m = np.max(x, axis=axis, keepdims=True)
    shifted = x - m
    log_z = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))   # logsumexp(x) - m
    return np.exp(shifted - log_z)
