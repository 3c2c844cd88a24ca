# mutant: divides the scores by sqrt(d_a), as dot-product attention does (additive attention does not)
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v / np.sqrt(v.shape[0])
    weights = softmax(scores)
    return weights @ keys, weights
