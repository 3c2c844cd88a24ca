# mutant: divides by the sum over the whole array, not along the axis
# must fail: axis=1 of a 3-D
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e)
