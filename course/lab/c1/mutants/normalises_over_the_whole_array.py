# mutant: normalises over the whole array, not along the axis
# must fail: matches the reference on random logits
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
