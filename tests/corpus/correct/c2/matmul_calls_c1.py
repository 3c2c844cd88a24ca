# idiom: vectorised with W_q @ query and keys @ W_k.T, tanh, @ v; calls c1's softmax
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    hidden = np.tanh(W_q @ query + keys @ W_k.T)   # (T, d_a): row i is W_q q + W_k h_i
    scores = hidden @ v                             # (T,)
    weights = softmax(scores)
    context = weights @ keys                        # (d_k,)
    return context, weights
