# mutant: treats x as (B, T, d_model): x.reshape(B, -1, d_model) folds extra leading dimensions into the sequence
# must fail: extra leading dimensions
def self_attention(x, W_q, W_k, W_v, causal=True):
    flat = x.reshape(x.shape[0], -1, x.shape[-1])
    mask = causal_mask(flat.shape[-2], device=x.device) if causal else None
    out, weights = scaled_dot_product_attention(flat @ W_q, flat @ W_k, flat @ W_v, mask=mask)
    return out.reshape(*x.shape[:-1], out.shape[-1]), weights
