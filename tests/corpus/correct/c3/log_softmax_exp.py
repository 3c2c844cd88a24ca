# idiom: torch.log_softmax(...).exp() after -inf masking, fully masked rows zeroed with masked_fill on the weights (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    d_k = q.shape[-1]
    scores = q.matmul(k.transpose(-2, -1)).div(math.sqrt(d_k))
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = torch.log_softmax(scores, dim=-1).exp()
    if mask is not None:
        empty_row = ~mask.any(dim=-1, keepdim=True)
        weights = weights.masked_fill(empty_row, 0.0)
    return weights.matmul(v), weights
