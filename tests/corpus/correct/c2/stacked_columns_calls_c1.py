# idiom: all encoder states as columns H = keys.T (d_k, T), W_k @ H + (W_q @ q)[:, None], v @ ...; calls c1's softmax
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    H = keys.T                                            # (d_k, T), one column per encoder state
    E = np.tanh(W_k @ H + (W_q @ query)[:, np.newaxis])   # (d_a, T)
    e = v @ E                                             # (T,)
    weights = softmax(e)
    context = H @ weights                                 # (d_k,)
    return context, weights
