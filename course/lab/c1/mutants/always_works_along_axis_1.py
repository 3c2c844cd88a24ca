# mutant: works along axis 1 whatever axis it is given (right for 2-D input and for axis=1)
# must fail: works along axis=0
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)
