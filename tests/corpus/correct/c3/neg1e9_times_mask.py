# idiom: masked_fill(mask == 0, -1e9), softmax, then weights * mask so a fully masked row is all zeros (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask   # exact zeros where masked; a fully masked row (uniform) becomes 0
    return weights @ v, weights
