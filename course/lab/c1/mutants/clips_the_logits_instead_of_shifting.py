# mutant: clips the logits to a range instead of subtracting each slice's max (the softmax changes)
# must fail: ±1e4
def softmax(x, axis=-1):
    e = np.exp(np.clip(x, -500, 500))
    return e / np.sum(e, axis=axis, keepdims=True)
