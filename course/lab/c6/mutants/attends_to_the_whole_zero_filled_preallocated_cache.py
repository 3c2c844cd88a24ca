# mutant: preallocates a zero-filled cache for all T tokens and attends to the whole buffer at every step: the empty slots of tokens not yet seen still take weight
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    T = x.shape[-2]
    keys = torch.zeros(*x.shape[:-2], T, W_k.shape[-1], dtype=x.dtype, device=x.device)
    values = torch.zeros(*x.shape[:-2], T, W_v.shape[-1], dtype=x.dtype, device=x.device)
    outputs = []
    for t in range(T):
        x_t = x[..., t : t + 1, :]
        keys[..., t : t + 1, :] = x_t @ W_k
        values[..., t : t + 1, :] = x_t @ W_v
        outputs.append(scaled_dot_product_attention(x_t @ W_q, keys, values)[0])
    return torch.cat(outputs, dim=-2)
