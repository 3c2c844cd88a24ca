# idiom: broadcast the leading dims, flatten them, torch.bmm with k.transpose(1, 2), reshape back; -inf fill + nan_to_num (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    T_q, d_k = q.shape[-2:]
    T_k, d_v = v.shape[-2:]
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n = math.prod(batch)
    q3 = q.expand(*batch, T_q, d_k).reshape(n, T_q, d_k)
    k3 = k.expand(*batch, T_k, d_k).reshape(n, T_k, d_k)
    scores = torch.bmm(q3, k3.transpose(1, 2)) / math.sqrt(d_k)
    scores = scores.reshape(*batch, T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    full = weights.shape[:-2]  # a mask may add leading dims
    m = math.prod(full)
    v3 = v.expand(*full, T_k, d_v).reshape(m, T_k, d_v)
    out = torch.bmm(weights.reshape(m, T_q, T_k), v3).reshape(*full, T_q, d_v)
    return out, weights
