# mutant: W_q q is not inside the tanh together with W_k h_i (a tanh of each, added, or W_q q left out), so the weights ignore the query
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    scores = (np.tanh(W_q @ query) + np.tanh(keys @ W_k.T)) @ v
    weights = softmax(scores)
    return weights @ keys, weights
