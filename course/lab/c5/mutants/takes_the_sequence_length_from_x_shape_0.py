# mutant: takes the sequence length from x.shape[0], which is the batch size for a batched x
# its error names it
# must fail: extra leading dimensions
def self_attention(x, W_q, W_k, W_v, causal=True):
    mask = causal_mask(x.shape[0], device=x.device) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
