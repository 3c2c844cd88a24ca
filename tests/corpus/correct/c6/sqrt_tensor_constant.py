# idiom: list cache, scale by the float32 constant torch.sqrt(torch.tensor(d_k)), .softmax(dim=-1), torch.stack then squeeze (self-contained)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    d_k = W_k.shape[-1]
    scale = torch.sqrt(torch.tensor(d_k))
    cached_k, cached_v, outputs = [], [], []
    for t in range(x.shape[-2]):
        tok = x[..., t:t + 1, :]
        q = tok @ W_q
        cached_k.append(tok @ W_k)
        cached_v.append(tok @ W_v)
        K = torch.cat(cached_k, dim=-2)
        V = torch.cat(cached_v, dim=-2)
        attn = (q @ K.transpose(-2, -1) / scale).softmax(dim=-1)
        outputs.append((attn @ V).squeeze(-2))
    if not outputs:
        return (x @ W_v)[..., :0, :]
    return torch.stack(outputs, dim=-2)
