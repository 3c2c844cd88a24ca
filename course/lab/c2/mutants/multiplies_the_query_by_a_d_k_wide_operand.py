# mutant: multiplies the query by something d_k wide (W_k, or the keys themselves) instead of by W_q
# its error names it
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_k @ query + keys @ W_q.T) @ v
    weights = softmax(scores)
    return weights @ keys, weights
