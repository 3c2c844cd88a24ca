# mutant: puts the reduced axis back at position 1 ([:, None]) wherever `axis` is: right only for 2-D input and for axis=1
# its error names it
# must fail: works along axis=0
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis)[:, None])
    return e / np.sum(e, axis=axis)[:, None]
