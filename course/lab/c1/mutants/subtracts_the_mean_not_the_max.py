# mutant: subtracts each slice's mean, not its max (exp still overflows for logits thousands apart)
# must fail: ±1e4
def softmax(x, axis=-1):
    e = np.exp(x - np.mean(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
