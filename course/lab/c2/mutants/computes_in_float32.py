# mutant: computes in float32 (float64 in, float32 out)
# must fail: float64 in, float64 out
def additive_attention(query, keys, W_q, W_k, v):
    query, keys, W_q, W_k, v = (a.astype(np.float32) for a in (query, keys, W_q, W_k, v))
    weights = softmax(np.tanh(W_q @ query + keys @ W_k.T) @ v)
    return weights @ keys, weights
