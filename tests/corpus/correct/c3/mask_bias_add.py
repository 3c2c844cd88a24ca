# idiom: additive float bias (0 where allowed, finfo(dtype).min where masked) added to the scores, .softmax(dim=-1), then weights * mask (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    d_k = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is None:
        weights = scores.softmax(dim=-1)
    else:
        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
        bias = bias.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = (scores + bias).softmax(dim=-1) * mask   # a fully masked row is uniform before * mask
    return torch.matmul(weights, v), weights
