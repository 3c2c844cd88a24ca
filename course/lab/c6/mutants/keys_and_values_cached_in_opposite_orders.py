# mutant: keeps the keys and the values in opposite orders (one cache grows at the front, the other at the back), so keys are paired with other tokens' values
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.insert(0, x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
