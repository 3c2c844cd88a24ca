# mutant: keeps its key/value cache in module-level lists and never clears them: every call after the first finds the earlier calls' keys and values there
# keeps state between calls
# its error names it
# must fail: leaves x and the weights unchanged
_keys, _values = [], []


def decode_with_kv_cache(x, W_q, W_k, W_v):
    outputs = []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        _keys.append(x_t @ W_k)
        _values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(_keys, dim=-2), torch.cat(_values, dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
