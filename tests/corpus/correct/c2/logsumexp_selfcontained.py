# idiom: tensordot for v, log-sum-exp normalisation, (weights[:, None] * keys).sum(0) (self-contained)
def additive_attention(query, keys, W_q, W_k, v):
    """Bahdanau attention of one decoder query over T encoder states.

    query (d_q,), keys (T, d_k), W_q (d_a, d_q), W_k (d_a, d_k), v (d_a,).
    Returns context (d_k,) = sum_i weights_i * keys_i, and weights (T,), non-negative, summing to 1.
    """
    features = np.tanh(keys @ W_k.T + W_q @ query)          # (T, d_a)
    e = np.tensordot(features, v, axes=([1], [0]))          # (T,)
    m = e.max()
    log_z = m + np.log(np.exp(e - m).sum())
    weights = np.exp(e - log_z)
    context = (weights[:, None] * keys).sum(axis=0)
    return context, weights
