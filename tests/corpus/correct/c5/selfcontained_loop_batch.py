# idiom: self-contained: flatten leading dims, loop over sequences with 2-D mm, arange causal mask, torch.stack
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    *batch, T, d_model = x.shape
    n = math.prod(batch)
    xs = x.reshape(n, T, d_model)
    d_k, d_v = W_q.shape[1], W_v.shape[1]
    idx = torch.arange(T, device=x.device)
    allowed = idx[:, None] >= idx[None, :]
    outs, ws = [], []
    for b in range(n):
        Q = torch.mm(xs[b], W_q)
        K = torch.mm(xs[b], W_k)
        V = torch.mm(xs[b], W_v)
        s = torch.mm(Q, K.t()) / math.sqrt(d_k)
        if causal:
            s = s.masked_fill(~allowed, float("-inf"))
        w = torch.softmax(s, dim=-1)
        ws.append(w)
        outs.append(torch.mm(w, V))
    if n == 0:
        out = x.new_zeros(*batch, T, d_v)
        return out, x.new_zeros(*batch, T, T)
    out = torch.stack(outs).reshape(*batch, T, d_v)
    weights = torch.stack(ws).reshape(*batch, T, T)
    return out, weights
