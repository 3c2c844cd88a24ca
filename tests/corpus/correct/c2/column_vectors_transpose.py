# idiom: column-vector form (W_k @ keys.T).T and W_q @ query[:, None]; calls c1's softmax with axis=0
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    projected_keys = (W_k @ keys.T).T                 # (T, d_a)
    projected_query = (W_q @ query[:, None])[:, 0]    # (d_a,)
    e = np.tanh(projected_keys + projected_query[None, :]).dot(v)
    alpha = softmax(e, axis=0)
    context = np.sum(alpha[:, None] * keys, axis=0)
    return context, alpha
