# mutant: always causal (ignores causal=False)
# must fail: causal=False
def self_attention(x, W_q, W_k, W_v, causal=True):
    mask = causal_mask(x.shape[-2], device=x.device)
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
