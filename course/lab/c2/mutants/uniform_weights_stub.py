# mutant: uniform weights and the mean of the keys, whatever the query
# stub
# must fail: matches the reference
def additive_attention(query, keys, W_q, W_k, v):
    weights = np.full(keys.shape[0], 1.0 / keys.shape[0], dtype=keys.dtype)  # (T,)
    return weights @ keys, weights
