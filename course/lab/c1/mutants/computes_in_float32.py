# mutant: computes in float32 (float64 in, float32 out)
# must fail: float64 in, float64 out
def softmax(x, axis=-1):
    x = x.astype(np.float32)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
