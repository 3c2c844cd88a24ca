# mutant: weights the caller's keys in place
# must fail: leaves query, keys
def additive_attention(query, keys, W_q, W_k, v):
    weights = softmax(np.tanh(W_q @ query + keys @ W_k.T) @ v)
    keys *= weights[:, None]
    return keys.sum(axis=0), weights
