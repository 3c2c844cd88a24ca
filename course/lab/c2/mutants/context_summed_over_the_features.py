# mutant: sums the weighted encoder states over their features, not over time (the context has one entry per time step)
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    weights = softmax(np.tanh(W_q @ query + keys @ W_k.T) @ v)
    return np.sum(weights[:, None] * keys, axis=1), weights
