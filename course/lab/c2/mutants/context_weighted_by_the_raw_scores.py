# mutant: weighs the encoder states by the raw scores, not by the softmax weights, in the context
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v
    return scores @ keys, softmax(scores)
