# mutant: reshapes the array into rows of x.shape[axis] entries (x.reshape(-1, n)), which are the slices along `axis` only when it is the last axis
# must fail: works along axis=1
def softmax(x, axis=-1):
    rows = x.reshape(-1, x.shape[axis])
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)
