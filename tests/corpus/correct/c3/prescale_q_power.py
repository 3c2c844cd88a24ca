# idiom: pre-scale q by d_k ** -0.5 before the product, k.mT, torch.where(mask, scores, -inf), nan_to_num (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    d_k = q.shape[-1]
    q_scaled = q * d_k ** -0.5
    scores = q_scaled @ k.mT
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
    weights = scores.softmax(-1).nan_to_num(0.0)
    return weights @ v, weights
