# mutant: takes the sum along `axis` without keepdims=True, so it divides along another axis
# must fail: leaves its input unchanged
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)
