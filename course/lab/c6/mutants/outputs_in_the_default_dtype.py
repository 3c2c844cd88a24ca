# mutant: preallocates a buffer (its outputs or its cache) with torch.zeros in the default dtype (float32), whatever comes in
# must fail: float64 in, float64 out
def decode_with_kv_cache(x, W_q, W_k, W_v):
    out = torch.zeros(*x.shape[:-1], W_v.shape[-1], device=x.device)
    keys, values = [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        out[..., t : t + 1, :] = out_t
    return out
