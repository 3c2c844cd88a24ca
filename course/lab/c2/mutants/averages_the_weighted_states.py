# mutant: averages the weighted encoder states (a mean, not a sum): the context is divided by T
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v
    weights = softmax(scores)
    context = np.mean(weights[:, None] * keys, axis=0)
    return context, weights
