# idiom: torch.einsum for both products, masked_fill -inf, then torch.where(mask.any(-1)) zeroes fully masked rows (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    scale = 1.0 / math.sqrt(q.size(-1))
    scores = torch.einsum("...qd,...kd->...qk", q, k) * scale
    if mask is None:
        weights = scores.softmax(dim=-1)
    else:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        weights = scores.softmax(dim=-1)
        has_key = mask.any(dim=-1, keepdim=True)
        weights = torch.where(has_key, weights, torch.zeros_like(weights))
    out = torch.einsum("...qk,...kd->...qd", weights, v)
    return out, weights
