# idiom: fused projection x @ torch.cat([W_q, W_k, W_v], dim=-1), then torch.split by widths; calls c3 and c4
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    d_k, d_v = W_q.shape[-1], W_v.shape[-1]
    qkv = x @ torch.cat([W_q, W_k, W_v], dim=-1)
    Q, K, V = torch.split(qkv, [d_k, d_k, d_v], dim=-1)
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(Q, K, V, mask=mask)
