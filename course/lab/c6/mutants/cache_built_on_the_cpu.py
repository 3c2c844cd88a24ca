# mutant: keeps its cache or its outputs in a buffer on the CPU whatever device x is on (made with torch.zeros or torch.empty without device=x.device)
# its error names it
# must fail: inputs' device
def decode_with_kv_cache(x, W_q, W_k, W_v):
    T = x.shape[-2]
    keys = torch.zeros(*x.shape[:-2], T, W_k.shape[-1], dtype=x.dtype)
    values = torch.zeros(*x.shape[:-2], T, W_v.shape[-1], dtype=x.dtype)
    outputs = []
    for t in range(T):
        x_t = x[..., t : t + 1, :]
        keys[..., t : t + 1, :] = x_t @ W_k
        values[..., t : t + 1, :] = x_t @ W_v
        outputs.append(scaled_dot_product_attention(x_t @ W_q, keys[..., : t + 1, :], values[..., : t + 1, :])[0])
    return torch.cat(outputs, dim=-2)
