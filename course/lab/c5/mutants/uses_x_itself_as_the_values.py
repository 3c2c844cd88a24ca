# mutant: uses x itself as the values (W_v is never applied)
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x, mask=mask)
