# mutant: keeps its key/value cache in module-level tensors and never resets them: every call after the first finds the earlier calls' keys and values there
# keeps state between calls
# its error names it
# must fail: leaves x and the weights unchanged
_K, _V = None, None


def decode_with_kv_cache(x, W_q, W_k, W_v):
    global _K, _V
    outputs = []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        k_t, v_t = x_t @ W_k, x_t @ W_v
        _K = k_t if _K is None else torch.cat([_K, k_t], dim=-2)
        _V = v_t if _V is None else torch.cat([_V, v_t], dim=-2)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, _K, _V)
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
