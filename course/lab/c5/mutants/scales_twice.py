# mutant: scales the queries by 1/sqrt(d_k) before c3, which scales again
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    q = q / math.sqrt(q.shape[-1])
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(q, k, v, mask)
