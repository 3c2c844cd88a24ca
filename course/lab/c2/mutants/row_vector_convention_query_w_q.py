# mutant: row-vector convention (query @ W_q)
# its error names it
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(query @ W_q + keys @ W_k) @ v
    weights = softmax(scores)
    return weights @ keys, weights
