# mutant: subtracts the max in place (x -= ...), which changes the caller's array
# must fail: unchanged
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
