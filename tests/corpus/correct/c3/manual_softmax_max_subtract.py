# idiom: hand-written softmax (amax subtraction, exp, sum) with -inf fill; guards -inf maxima and zero denominators (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)  # all -inf row
    e = torch.exp(scores - row_max)
    denom = e.sum(dim=-1, keepdim=True)
    weights = e / denom.clamp_min(torch.finfo(e.dtype).tiny)   # 0 / tiny = 0 for a fully masked row
    return weights @ v, weights
