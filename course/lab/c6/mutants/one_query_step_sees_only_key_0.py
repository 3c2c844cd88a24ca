# mutant: masks each one-query step with the first row of a causal mask (a 1 × (t + 1) tril, or is_causal=True): the query sees only key 0
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t:t+1, :]
        keys.append(x_t @ W_k); values.append(x_t @ W_v)
        K, V = torch.cat(keys, dim=-2), torch.cat(values, dim=-2)
        mask = torch.ones(1, K.shape[-2], dtype=torch.bool, device=x.device).tril()
        outs.append(scaled_dot_product_attention(x_t @ W_q, K, V, mask=mask)[0])
    return torch.cat(outs, dim=-2)
