# mutant: any axis other than the last handled by transposing (right for axis 0 only)
# must fail: works along axis=1
def softmax(x, axis=-1):
    if axis not in (-1, x.ndim - 1):
        return softmax(x.T).T
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
