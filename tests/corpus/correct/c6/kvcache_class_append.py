# idiom: a small KVCache class with append() that torch.cat's new entries onto stored tensors, attention via c3; calls c3
class KVCache:
    """Grows along the time axis (-2); keys and values of past tokens are stored, never recomputed."""

    def __init__(self):
        self.k = None
        self.v = None

    def append(self, k_new, v_new):
        if self.k is None:
            self.k, self.v = k_new, v_new
        else:
            self.k = torch.cat([self.k, k_new], dim=-2)
            self.v = torch.cat([self.v, v_new], dim=-2)
        return self.k, self.v


def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    cache = KVCache()
    outputs = []
    for t in range(x.shape[-2]):
        token = x[..., t:t + 1, :]
        K, V = cache.append(token @ W_k, token @ W_v)
        out, _ = scaled_dot_product_attention(token @ W_q, K, V)
        outputs.append(out)
    if not outputs:
        return torch.zeros(*x.shape[:-2], 0, W_v.shape[-1], dtype=x.dtype, device=x.device)
    return torch.cat(outputs, dim=-2)
