# mutant: subtracts the whole array's max instead of each slice's
# must fail: ±1e4
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=axis, keepdims=True)
