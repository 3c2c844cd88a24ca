# mutant: takes the softmax of the tanh layer over time before the product with v, so the weights are not a softmax of the scores
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    hidden = np.tanh(W_q @ query + keys @ W_k.T)  # (T, d_a)
    weights = softmax(hidden, axis=0) @ v
    return weights @ keys, weights
