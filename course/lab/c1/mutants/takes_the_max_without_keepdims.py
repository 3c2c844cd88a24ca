# mutant: takes the max along `axis` without keepdims=True, so it is subtracted along another axis
# must fail: leaves its input unchanged
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis))
    return e / np.sum(e, axis=axis, keepdims=True)
