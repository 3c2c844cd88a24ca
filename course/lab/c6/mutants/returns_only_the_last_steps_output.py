# mutant: returns only the last step's output (..., 1, d_v), not every step's outputs (..., T, d_v)
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values = [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
    return out_t
