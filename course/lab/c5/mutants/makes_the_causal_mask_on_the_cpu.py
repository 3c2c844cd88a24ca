# mutant: makes a tensor on the CPU (such as a causal mask made without device=x.device) rather than on x's device
# its error names it
# must fail: device
def self_attention(x, W_q, W_k, W_v, causal=True):
    mask = causal_mask(x.shape[-2]) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
