# idiom: torch.einsum("...td,de->...te") projections, explicit if/else on causal; calls c3 and c4
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    q = torch.einsum("...td,de->...te", x, W_q)
    k = torch.einsum("...td,de->...te", x, W_k)
    v = torch.einsum("...td,de->...te", x, W_v)
    if causal:
        T = x.size(-2)
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, x.device))
    else:
        out, weights = scaled_dot_product_attention(q, k, v)
    return out, weights
