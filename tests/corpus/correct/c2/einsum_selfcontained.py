# idiom: np.einsum for every contraction, inline stable softmax (self-contained)
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    wq = np.einsum("aq,q->a", W_q, query)
    wk = np.einsum("ak,tk->ta", W_k, keys)
    e = np.einsum("a,ta->t", v, np.tanh(wq + wk))
    e = np.exp(e - e.max())
    weights = e / e.sum()
    context = np.einsum("t,tk->k", weights, keys)
    return context, weights
