# mutant: multiplies the keys by W_k, not by its transpose (keys @ W_k: W_k is (d_a, d_k))
# its error names it
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k) @ v
    weights = softmax(scores)
    return weights @ keys, weights
