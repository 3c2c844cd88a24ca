# idiom: np.matmul broadcasting W_k over keys[:, :, None] (T, d_a, 1), squeeze; calls c1's softmax
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    key_proj = np.matmul(W_k[None, :, :], keys[:, :, None])[:, :, 0]   # (T, d_a)
    query_proj = np.matmul(W_q, query)                                  # (d_a,)
    energies = np.matmul(np.tanh(key_proj + query_proj), v)            # (T,)
    weights = softmax(energies, axis=-1)
    context = np.matmul(keys.T, weights)                                # (d_k,)
    return context, weights
