# mutant: always sums over the last axis
# must fail: works along axis=1
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
