# idiom: calls c3 with its own arange-comparison causal mask (does not call c4); projections via torch.matmul
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    T = x.shape[-2]
    mask = None
    if causal:
        pos = torch.arange(T, device=x.device)
        mask = pos.unsqueeze(-1) >= pos.unsqueeze(0)
    return scaled_dot_product_attention(torch.matmul(x, W_q), torch.matmul(x, W_k), torch.matmul(x, W_v), mask)
