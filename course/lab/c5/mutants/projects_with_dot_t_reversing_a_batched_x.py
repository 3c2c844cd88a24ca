# mutant: projects as (W^T x^T)^T with .T, which reverses every dimension of a batched x (x.transpose(-2, -1) swaps the last two)
# its error names it
# must fail: extra leading dimensions
def self_attention(x, W_q, W_k, W_v, causal=True):
    q = (W_q.T @ x.T).T
    k = (W_k.T @ x.T).T
    v = (W_v.T @ x.T).T
    mask = causal_mask(x.shape[-2], device=x.device) if causal else None
    return scaled_dot_product_attention(q, k, v, mask)
