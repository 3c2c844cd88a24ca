# mutant: computes in float32 (float64 in, float32 out)
# must fail: float64 in, float64 out
def self_attention(x, W_q, W_k, W_v, causal=True):
    x, W_q, W_k, W_v = x.float(), W_q.float(), W_k.float(), W_v.float()
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
