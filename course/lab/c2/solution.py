def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    # BEGIN SOLUTION
    scores = np.tanh(W_q @ query + keys @ W_k.T) @ v  # (T,): e_i = v . tanh(W_q q + W_k h_i)
    weights = softmax(scores)  # (T,)
    context = weights @ keys  # (d_k,)
    return context, weights
    # END SOLUTION
