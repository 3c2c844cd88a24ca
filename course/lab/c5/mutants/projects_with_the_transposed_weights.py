# mutant: projects with x @ W.T: the weight matrices transposed
# its error names it
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q.T, x @ W_k.T, x @ W_v.T
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(q, k, v, mask=mask)
