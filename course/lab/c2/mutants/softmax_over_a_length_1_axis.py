# mutant: takes the softmax along a length-1 axis (the scores kept as a (T, 1) column), so every weight is 1
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v[:, None]  # (T, 1)
    weights = softmax(scores, axis=-1).reshape(-1)
    return weights @ keys, weights
