# mutant: ignores causal=True
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)
