# idiom: loop over query positions, one (..., 1, T_k) score row at a time, mask broadcast to full shape first, torch.cat rows (self-contained)
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    T_q, d_k = q.shape[-2], q.shape[-1]
    T_k = k.shape[-2]
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is not None:
        full_shape = torch.broadcast_shapes((*batch, T_q, T_k), mask.shape)
        batch = full_shape[:-2]
        mask = mask.expand(full_shape)
    scale = math.sqrt(d_k)
    kt = k.transpose(-2, -1)
    weight_rows, out_rows = [], []
    for i in range(T_q):
        s = (q[..., i:i + 1, :] @ kt) / scale            # (..., 1, T_k)
        s = s.expand(*batch, 1, T_k)
        if mask is not None:
            row_mask = mask[..., i:i + 1, :]
            s = s.masked_fill(~row_mask, float("-inf"))
            w = torch.softmax(s, dim=-1)
            w = torch.where(row_mask.any(-1, keepdim=True), w, torch.zeros_like(w))
        else:
            w = torch.softmax(s, dim=-1)
        weight_rows.append(w)
        out_rows.append(w @ v)
    if T_q == 0:
        weights = (q @ kt).expand(*batch, 0, T_k)
        return weights @ v, weights
    return torch.cat(out_rows, dim=-2), torch.cat(weight_rows, dim=-2)
