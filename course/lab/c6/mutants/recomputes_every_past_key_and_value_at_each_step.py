# mutant: recomputes every past key and value at each step
# must fail: projected once
def decode_with_kv_cache(x, W_q, W_k, W_v):
    outs = []
    for t in range(x.shape[-2]):
        prefix = x[..., : t + 1, :]
        out, _ = scaled_dot_product_attention(x[..., t:t+1, :] @ W_q, prefix @ W_k, prefix @ W_v)
        outs.append(out)
    return torch.cat(outs, dim=-2)
