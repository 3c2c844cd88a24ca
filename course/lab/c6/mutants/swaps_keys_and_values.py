# mutant: swaps keys and values: each step attends with the values as its keys and the keys as its values
# must fail: float32 in, float32 out
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_v)
        values.append(x_t @ W_k)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
