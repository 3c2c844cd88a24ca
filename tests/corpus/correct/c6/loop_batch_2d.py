# idiom: flatten leading dims, loop over sequences and tokens with 1-D vectors (x[b, t] @ W), stacked caches (self-contained)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    *batch, T, d_model = x.shape
    d_v = W_v.shape[-1]
    n = math.prod(batch)
    xs = x.reshape(n, T, d_model)
    scale = 1.0 / math.sqrt(W_q.shape[-1])
    seqs = []
    for b in range(n):
        keys, values, outs = [], [], []
        for t in range(T):
            x_t = xs[b, t]                        # (d_model,)
            q = x_t @ W_q                         # (d_k,)
            keys.append(x_t @ W_k)
            values.append(x_t @ W_v)
            K = torch.stack(keys)                 # (t + 1, d_k)
            V = torch.stack(values)               # (t + 1, d_v)
            w = torch.softmax((K @ q) * scale, dim=0)
            outs.append(w @ V)                    # (d_v,)
        seqs.append(torch.stack(outs) if outs else xs.new_zeros(0, d_v))
    if not seqs:
        return x.new_zeros(*batch, T, d_v)
    return torch.stack(seqs).reshape(*batch, T, d_v)
