# mutant: takes T, the causal mask's size, from x.shape[0]
# says: takes T, the causal mask's size, from the wrong dimension of x (x is (..., T, d_model), with any number of leading dimensions), so the mask does not fit the scores
# its error names it
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    mask = causal_mask(x.shape[0], device=x.device) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
