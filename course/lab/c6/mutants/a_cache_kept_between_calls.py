# mutant: keeps its cache between calls (keyed on the shapes)
# keeps state between calls
# must fail: a second call starts from an empty cache
_CACHES = {}


def decode_with_kv_cache(x, W_q, W_k, W_v):
    cache = _CACHES.setdefault((tuple(x.shape), x.dtype, x.device.type), {"keys": [], "values": [], "outputs": []})
    if len(cache["outputs"]) == x.shape[-2]:
        return torch.cat(cache["outputs"], dim=-2)
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        cache["keys"].append(x_t @ W_k)
        cache["values"].append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(cache["keys"], dim=-2), torch.cat(cache["values"], dim=-2))
        cache["outputs"].append(out_t)
    return torch.cat(cache["outputs"], dim=-2)
