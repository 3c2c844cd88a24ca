# mutant: uses x as its output buffer: writes each step's output back into the caller's x
# must fail: leaves x and the weights unchanged
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values = [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        x[..., t : t + 1, : out_t.shape[-1]] = out_t
    return x[..., : W_v.shape[-1]]
