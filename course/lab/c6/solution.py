def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    # BEGIN SOLUTION
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]  # (..., 1, d_model): the newest token only
        keys.append(x_t @ W_k)  # projected once, then kept
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        outputs.append(out_t)  # (..., 1, d_v)
    return torch.cat(outputs, dim=-2)
    # END SOLUTION
