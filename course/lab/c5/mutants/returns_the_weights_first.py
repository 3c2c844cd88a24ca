# mutant: returns (weights, out), not (out, weights)
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    return weights, out
