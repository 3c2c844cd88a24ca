# mutant: the context sums the projected keys (W_k h_i), not the encoder states h_i
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    projected = keys @ W_k.T
    weights = softmax(np.tanh(W_q @ query + projected) @ v)
    return weights @ projected, weights
