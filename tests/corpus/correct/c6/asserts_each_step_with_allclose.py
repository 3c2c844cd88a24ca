# idiom: each step checked with torch.allclose on the weights of c3 (reads values: sound on every device)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), one token at a time with a key/value cache."""
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, w = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        assert torch.allclose(w.sum(-1), torch.ones_like(w.sum(-1))), "weights should sum to 1"
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
