# mutant: subtracts the max over the last axis, not along `axis` (the sum is taken along `axis`)
# must fail: works along axis=1
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
