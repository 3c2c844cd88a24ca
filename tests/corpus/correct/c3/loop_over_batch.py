# idiom: broadcast everything to the full shape, flatten leading dims, loop over the batch with 2-D matmuls, torch.stack (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    T_q, d_k = q.shape[-2:]
    T_k, d_v = v.shape[-2:]
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is not None:
        batch = torch.broadcast_shapes((*batch, T_q, T_k), mask.shape)[:-2]
    n = math.prod(batch)
    if mask is not None:
        m = mask.expand(*batch, T_q, T_k).reshape(n, T_q, T_k)
    qf = q.expand(*batch, T_q, d_k).reshape(n, T_q, d_k)
    kf = k.expand(*batch, T_k, d_k).reshape(n, T_k, d_k)
    vf = v.expand(*batch, T_k, d_v).reshape(n, T_k, d_v)
    if n == 0:
        weights = q.new_zeros(*batch, T_q, T_k)
        return weights @ v.expand(*batch, T_k, d_v), weights
    outs, ws = [], []
    for b in range(n):
        s = qf[b] @ kf[b].T / math.sqrt(d_k)
        if mask is not None:
            s = s.masked_fill(~m[b], float("-inf"))
        w = torch.softmax(s, dim=-1).nan_to_num(nan=0.0)
        ws.append(w)
        outs.append(w @ vf[b])
    out = torch.stack(outs).reshape(*batch, T_q, d_v)
    weights = torch.stack(ws).reshape(*batch, T_q, T_k)
    return out, weights
