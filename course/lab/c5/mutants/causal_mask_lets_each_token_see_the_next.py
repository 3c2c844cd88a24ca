# mutant: the causal mask off by one (tril with diagonal=1): each token also attends to the token after it
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    T = x.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(1) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
