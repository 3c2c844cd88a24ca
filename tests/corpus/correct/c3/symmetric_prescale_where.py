# idiom: pre-scale q and k each by d_k ** -0.25 (symmetric), torch.where masking with -inf, where(mask.any) zeroing (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    s = q.shape[-1] ** -0.25
    scores = (q * s) @ (k * s).transpose(-2, -1)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        weights = torch.softmax(scores, dim=-1)
        weights = torch.where(mask.any(-1, keepdim=True), weights, 0.0)
    return weights @ v, weights
