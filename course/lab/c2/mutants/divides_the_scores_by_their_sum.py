# mutant: divides the scores by their sum instead of taking their softmax, so a negative score gets a negative weight
# must fail: non-negative
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v
    weights = scores / scores.sum()
    return weights @ keys, weights
