# idiom: python-float scale, in-place div_ / masked_fill_ on the freshly computed scores (never the inputs), nan_to_num (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    d_k = float(q.shape[-1])
    scores = q @ k.transpose(-2, -1)       # a new tensor: safe to modify in place
    scores.div_(d_k ** 0.5)
    if mask is not None:
        scores = scores.expand(torch.broadcast_shapes(scores.shape, mask.shape)).clone()
        scores.masked_fill_(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ v, weights
