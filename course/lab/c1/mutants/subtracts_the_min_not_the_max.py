# mutant: subtracts each slice's min, not its max (every exponent >= 0: exp overflows)
# must fail: ±1e4
def softmax(x, axis=-1):
    e = np.exp(x - np.min(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
