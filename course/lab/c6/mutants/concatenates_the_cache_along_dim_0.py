# mutant: concatenates the cache along dimension 0, not along the tokens' axis -2 (right only for 2-D x)
# its error names it
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=0), torch.cat(values, dim=0))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
