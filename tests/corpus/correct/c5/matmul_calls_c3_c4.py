# idiom: x @ W projections, mask = causal_mask(T, device=x.device) if causal else None; calls c3 and c4
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    Q = x @ W_q
    K = x @ W_k
    V = x @ W_v
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(Q, K, V, mask=mask)
