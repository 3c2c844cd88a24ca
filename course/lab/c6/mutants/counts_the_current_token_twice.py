# mutant: counts the current token twice (appends its key and value, then adds them again for the step)
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        k_t, v_t = x_t @ W_k, x_t @ W_v
        keys.append(k_t)
        values.append(v_t)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys + [k_t], dim=-2), torch.cat(values + [v_t], dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
