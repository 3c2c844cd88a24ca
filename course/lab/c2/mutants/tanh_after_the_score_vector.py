# mutant: the tanh applied after v (tanh(vᵀ(W_q q + W_k h_i))), not inside it
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh((W_q @ query + keys @ W_k.T) @ v)
    weights = softmax(scores)
    return weights @ keys, weights
