# idiom: a cache class holding preallocated (..., T_max, d) tensors with a length counter, append() writes in place; calls c3
class PreallocatedKVCache:
    def __init__(self, batch_shape, max_len, d_k, d_v, dtype, device):
        self.keys = torch.zeros(*batch_shape, max_len, d_k, dtype=dtype, device=device)
        self.values = torch.zeros(*batch_shape, max_len, d_v, dtype=dtype, device=device)
        self.length = 0

    def append(self, k, v):
        n = k.shape[-2]
        self.keys[..., self.length:self.length + n, :] = k
        self.values[..., self.length:self.length + n, :] = v
        self.length += n

    def view(self):
        return self.keys[..., : self.length, :], self.values[..., : self.length, :]


def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    *batch, T, _ = x.shape
    dtype = torch.result_type(x, W_q)
    cache = PreallocatedKVCache(batch, T, W_k.shape[-1], W_v.shape[-1], dtype, x.device)
    outs = []
    for t in range(T):
        x_t = x[..., t:t + 1, :]
        cache.append(x_t @ W_k, x_t @ W_v)
        K, V = cache.view()
        o, _ = scaled_dot_product_attention(x_t @ W_q, K, V)
        outs.append(o)
    if T == 0:
        return cache.values
    return torch.cat(outs, dim=-2)
