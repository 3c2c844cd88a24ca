# mutant: forgets the tanh
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = (W_q @ query + keys @ W_k.T) @ v
    weights = softmax(scores)
    return weights @ keys, weights
