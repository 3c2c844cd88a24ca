# idiom: preallocated output via x.new_zeros(dtype=result_type) written per step, list cache, hand-written max-subtracted softmax, pre-scaled q by d_k ** -0.5 (self-contained)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    T = x.shape[-2]
    d_k, d_v = W_q.shape[-1], W_v.shape[-1]
    out = x.new_zeros(*x.shape[:-2], T, d_v, dtype=torch.result_type(x, W_v))
    K_list, V_list = [], []
    for t in range(T):
        x_t = x[..., t:t + 1, :]
        q_t = (x_t @ W_q) * d_k ** -0.5
        K_list.append(x_t @ W_k)
        V_list.append(x_t @ W_v)
        K = torch.cat(K_list, dim=-2)
        V = torch.cat(V_list, dim=-2)
        s = q_t @ K.transpose(-2, -1)
        s = s - s.max(dim=-1, keepdim=True).values
        e = torch.exp(s)
        out[..., t:t + 1, :] = (e / e.sum(dim=-1, keepdim=True)) @ V
    return out
