# mutant: the causal mask leaves out the diagonal (j < i): a token cannot attend to itself
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    T = x.shape[-2]
    position = torch.arange(T, device=x.device)
    mask = (position[None, :] < position[:, None]) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)
