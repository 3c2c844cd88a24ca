# mutant: returns the log-softmax (log-probabilities), not the probabilities
# must fail: matches the reference on random logits
def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
