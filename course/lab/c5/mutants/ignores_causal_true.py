# mutant: ignores causal=True
# says: no causal mask takes effect by default (causal=True): every token also attends to the tokens after it
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)
