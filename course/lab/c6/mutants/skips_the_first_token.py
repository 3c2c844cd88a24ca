# mutant: starts decoding at the second token
# must fail: a single token
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [x[..., :1, :] @ W_k], [x[..., :1, :] @ W_v], []
    for t in range(1, x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        outputs.append(scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))[0])
    return torch.cat(outputs, dim=-2) if outputs else x[..., :0, :] @ W_v
