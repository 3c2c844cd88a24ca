# idiom: preallocated (..., T, d) key/value buffers filled in place with index assignment, c3 on the filled prefix; calls c3
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    *batch, T, _ = x.shape
    d_k, d_v = W_k.shape[-1], W_v.shape[-1]
    dtype = torch.result_type(x, W_v)
    K = torch.empty(*batch, T, d_k, dtype=dtype, device=x.device)
    V = torch.empty(*batch, T, d_v, dtype=dtype, device=x.device)
    out = torch.empty(*batch, T, d_v, dtype=dtype, device=x.device)
    for t in range(T):
        x_t = x[..., t:t + 1, :]
        q_t = x_t @ W_q
        K[..., t:t + 1, :] = x_t @ W_k
        V[..., t:t + 1, :] = x_t @ W_v
        o_t, _ = scaled_dot_product_attention(q_t, K[..., : t + 1, :], V[..., : t + 1, :])
        out[..., t:t + 1, :] = o_t
    return out
