# mutant: takes each step's mask from the wrong corner of the T × T causal mask (the last t + 1 entries of row t, not the first)
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    T = x.shape[-2]
    full = causal_mask(T, device=x.device)
    keys, values, outputs = [], [], []
    for t in range(T):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        mask = full[t : t + 1, T - t - 1 :]
        outputs.append(scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2), mask=mask)[0])
    return torch.cat(outputs, dim=-2)
