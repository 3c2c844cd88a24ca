# idiom: explicit Python loop over the T encoder states for the scores and the context; calls c1's softmax
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    T = keys.shape[0]
    dtype = np.result_type(query, keys, W_q, W_k, v)
    q_part = W_q @ query
    scores = np.zeros(T, dtype=dtype)
    for i in range(T):
        scores[i] = v @ np.tanh(q_part + W_k @ keys[i])
    weights = softmax(scores)
    context = np.zeros(keys.shape[1], dtype=dtype)
    for i in range(T):
        context = context + weights[i] * keys[i]
    return context, weights
