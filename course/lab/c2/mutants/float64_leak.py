# mutant: float64 leak (float32 in, float64 out)
# must fail: float32 in, float32 out
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k.T).astype(np.float64) @ v
    weights = softmax(scores)
    return weights @ keys, weights
