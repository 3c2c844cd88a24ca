# mutant: the tanh applied to the context, not to the scores' hidden layer
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    weights = softmax((W_q @ query + keys @ W_k.T) @ v)
    return np.tanh(weights @ keys), weights
