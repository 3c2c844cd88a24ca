def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    # BEGIN SOLUTION
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(q, k, v, mask=mask)
    # END SOLUTION
