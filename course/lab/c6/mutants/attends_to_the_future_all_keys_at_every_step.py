# mutant: attends to the future (all keys at every step)
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    k, v = x @ W_k, x @ W_v
    outs = [scaled_dot_product_attention(x[..., t:t+1, :] @ W_q, k, v)[0] for t in range(x.shape[-2])]
    return torch.cat(outs, dim=-2)
