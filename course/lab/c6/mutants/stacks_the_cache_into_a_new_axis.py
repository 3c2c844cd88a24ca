# mutant: stacks the cached (..., 1, d) keys and values with torch.stack(..., dim=-2), not torch.cat: the cache gains an axis, and the outputs a dimension too many
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.stack(keys, dim=-2), torch.stack(values, dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
