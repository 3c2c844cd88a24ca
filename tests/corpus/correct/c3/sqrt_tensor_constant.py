# idiom: scale by the float32 tensor constant torch.sqrt(torch.tensor(d_k)), -inf fill, where(isnan) -> 0 (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    d_k = k.shape[-1]
    scores = torch.matmul(q, k.transpose(-1, -2)) / torch.sqrt(torch.tensor(d_k))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
    output = torch.matmul(weights, v)
    return output, weights
