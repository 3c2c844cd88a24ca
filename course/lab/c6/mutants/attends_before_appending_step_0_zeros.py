# mutant: leaves the current token's key and value out of its own step (attends before appending them, or slices the cache one short): step t sees keys 0 … t − 1, and step 0, with none, outputs zeros
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        if keys:
            out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        else:
            out_t = torch.zeros_like(x_t @ W_v)
        outputs.append(out_t)
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
    return torch.cat(outputs, dim=-2)
