# mutant: float64 leak
# must fail: float32
def softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
