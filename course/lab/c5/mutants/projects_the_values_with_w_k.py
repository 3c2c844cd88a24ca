# mutant: projects the values with W_k instead of W_v
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_k
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(q, k, v, mask=mask)
