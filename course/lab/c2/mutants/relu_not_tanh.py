# mutant: uses a ReLU in the scores' hidden layer where the tanh goes
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.maximum(0, W_q @ query + keys @ W_k.T) @ v
    weights = softmax(scores)
    return weights @ keys, weights
