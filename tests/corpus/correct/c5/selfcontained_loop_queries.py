# idiom: self-contained: loop over query positions, causal by slicing keys to [:i + 1] and padding weights with zeros
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    T = x.shape[-2]
    scale = 1.0 / math.sqrt(Q.shape[-1])
    outs, rows = [], []
    for i in range(T):
        stop = i + 1 if causal else T
        s = (Q[..., i:i + 1, :] @ K[..., :stop, :].transpose(-2, -1)) * scale   # (..., 1, stop)
        w = torch.softmax(s, dim=-1)
        outs.append(w @ V[..., :stop, :])
        pad = w.new_zeros(*w.shape[:-1], T - stop)
        rows.append(torch.cat([w, pad], dim=-1))
    if T == 0:
        weights = Q @ K.transpose(-2, -1)
        return weights @ V, weights
    return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2)
