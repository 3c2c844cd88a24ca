# mutant: causal mask off by one, built on the CPU
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    T = x.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool).tril(1) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
