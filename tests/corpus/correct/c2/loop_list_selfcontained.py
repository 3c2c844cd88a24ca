# idiom: list comprehension over encoder states with np.dot, np.array of scores, inline softmax (self-contained)
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    s = np.dot(W_q, query)
    e = np.array([np.dot(v, np.tanh(s + np.dot(W_k, h))) for h in keys], dtype=np.result_type(keys, s, v))
    e = e - np.max(e)
    alpha = np.exp(e) / np.sum(np.exp(e))
    context = np.dot(alpha, keys)
    return context, alpha
