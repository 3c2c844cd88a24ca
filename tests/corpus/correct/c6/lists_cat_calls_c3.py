# idiom: Python lists of per-step keys/values, torch.cat along the time axis, attend with c3 (mask=None); calls c3
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    T = x.shape[-2]
    keys, values, outputs = [], [], []
    for t in range(T):
        x_t = x[..., t:t + 1, :]           # (..., 1, d_model): only token t
        q_t = x_t @ W_q
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        K = torch.cat(keys, dim=-2)        # (..., t + 1, d_k)
        V = torch.cat(values, dim=-2)
        out_t, _ = scaled_dot_product_attention(q_t, K, V)
        outputs.append(out_t)
    if not outputs:
        return (x @ W_v)[..., :0, :]
    return torch.cat(outputs, dim=-2)
