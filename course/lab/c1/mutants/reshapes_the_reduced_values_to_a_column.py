# mutant: reshapes the max and the sum to a (-1, 1) column: right only for 2-D input along its last axis
# its error names it
# must fail: works along axis=1
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis).reshape(-1, 1))
    return e / np.sum(e, axis=axis).reshape(-1, 1)
