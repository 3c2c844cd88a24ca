# idiom: fused weights torch.cat([W_q, W_k, W_v], dim=-1), one matmul per token then split; lists cache, inline softmax (self-contained)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    d_k, d_v = W_q.shape[-1], W_v.shape[-1]
    W_qkv = torch.cat([W_q, W_k, W_v], dim=-1)          # (d_model, 2 d_k + d_v)
    ks, vs, outs = [], [], []
    for t in range(x.shape[-2]):
        qkv = x[..., t:t + 1, :] @ W_qkv                 # token t projected once
        q, k, v = qkv.split([d_k, d_k, d_v], dim=-1)
        ks.append(k)
        vs.append(v)
        K, V = torch.cat(ks, dim=-2), torch.cat(vs, dim=-2)
        scores = q @ K.transpose(-2, -1) / math.sqrt(d_k)
        outs.append(torch.softmax(scores, dim=-1) @ V)
    if not outs:
        return x.new_empty(*x.shape[:-2], 0, d_v)
    return torch.cat(outs, dim=-2)
