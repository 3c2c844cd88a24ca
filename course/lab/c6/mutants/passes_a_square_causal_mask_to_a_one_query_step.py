# mutant: passes a (t + 1) × (t + 1) causal mask to a one-query step: the mask broadcasts the one query into t + 1 output rows
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        mask = causal_mask(t + 1, device=x.device)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2), mask)
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
