# mutant: scores with a product of the two projections, (W_k h_i)ᵀ(W_q q) (a multiplicative, Luong-style score), not Bahdanau's additive vᵀ tanh(W_q q + W_k h_i)
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = (keys @ W_k.T) @ (W_q @ query)
    weights = softmax(scores)
    return weights @ keys, weights
