# mutant: ignores `axis` and always works along the last axis
# must fail: axis=1 of a 3-D
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
