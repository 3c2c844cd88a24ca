# idiom: always passes a mask: causal_mask(...) or an all-True torch.ones(T, T, dtype=bool) when causal=False; calls c3 and c4
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    T = x.shape[-2]
    if causal:
        mask = causal_mask(T, device=x.device)
    else:
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device)
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
