# idiom: fill with torch.finfo(dtype).min (dtype-safe), softmax, multiply by mask and renormalise with a clamped sum (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
        total = weights.sum(dim=-1, keepdim=True)
        weights = weights / total.clamp(min=torch.finfo(weights.dtype).tiny)
    return torch.matmul(weights, v), weights
