# mutant: loops over the first axis and normalises each x[i] as a whole, whatever `axis` is: right only for 2-D input along its last axis
# must fail: works along axis=1
def softmax(x, axis=-1):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        e = np.exp(x[i] - np.max(x[i]))
        out[i] = e / np.sum(e)
    return out
