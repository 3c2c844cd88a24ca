# mutant: writes into its input
# must fail: unchanged
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    return x / np.sum(x, axis=axis, keepdims=True)
