# mutant: no max-subtraction
# must fail: ±1e4
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
