# mutant: passes a float 0/1 causal mask (torch.ones(T, T).tril()) where a bool one is expected (True = may attend)
# its error names it
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    T = x.shape[-2]
    mask = torch.ones(T, T, device=x.device).tril() if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
