# idiom: torch.matmul projections, causal mask expanded to x's batch dims with .expand before the call; calls c3 and c4
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    *batch, T, _ = x.shape
    Q = torch.matmul(x, W_q)
    K = torch.matmul(x, W_k)
    V = torch.matmul(x, W_v)
    mask = causal_mask(T, device=x.device).expand(*batch, T, T) if causal else None
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    return out, weights
