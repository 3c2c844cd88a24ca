# idiom: lists + torch.cat cache, inline single-query attention with math.sqrt and torch.softmax (self-contained)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    k_cache, v_cache, outs = [], [], []
    d_k = W_q.shape[-1]
    for t in range(x.shape[-2]):
        xt = x[..., t:t + 1, :]
        q = xt @ W_q
        k_cache.append(xt @ W_k)
        v_cache.append(xt @ W_v)
        K = torch.cat(k_cache, dim=-2)
        V = torch.cat(v_cache, dim=-2)
        w = torch.softmax(q @ K.transpose(-2, -1) / math.sqrt(d_k), dim=-1)   # (..., 1, t + 1)
        outs.append(w @ V)
    if len(outs) == 0:
        return x.new_zeros(*x.shape[:-2], 0, W_v.shape[-1])
    return torch.cat(outs, dim=-2)
