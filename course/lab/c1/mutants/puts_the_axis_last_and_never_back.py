# mutant: puts `axis` last to work along it and never puts it back (the output's axes are reordered)
# must fail: works along axis=1
def softmax(x, axis=-1):
    x = np.moveaxis(x, axis, -1)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
