# mutant: computes the softmax in place in its input and returns that same array
# must fail: unchanged
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x
