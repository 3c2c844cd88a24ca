# mutant: splits a fused key/value projection at its middle (right only when d_k = d_v or by luck)
# must fail: a single token
def decode_with_kv_cache(x, W_q, W_k, W_v):
    W_kv = torch.cat([W_k, W_v], dim=-1)
    half = W_kv.shape[-1] // 2
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        kv = x_t @ W_kv
        keys.append(kv[..., :half])
        values.append(kv[..., half:])
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
