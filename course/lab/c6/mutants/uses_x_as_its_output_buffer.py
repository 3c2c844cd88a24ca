# mutant: uses x as its output buffer: writes each step's output back into the caller's x
# must fail: leaves x and the weights unchanged
def decode_with_kv_cache(x, W_q, W_k, W_v):
    d_v = W_v.shape[-1]
    # x's own memory where it has room (d_v <= d_model: so on the line above); code that writes into x whatever
    # the sizes raises on the first line under the draws where d_v > d_model, an error that names nothing
    out = x[..., :d_v] if d_v <= x.shape[-1] else torch.empty(*x.shape[:-1], d_v, dtype=x.dtype, device=x.device)
    keys, values = [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        out[..., t : t + 1, :] = out_t
    return out
