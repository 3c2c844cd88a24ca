# idiom: dict cache {"k": [...], "v": [...]}, F.linear(x_t, W.T) projections, c3 for the attention; calls c3
import torch.nn.functional as F


def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    cache = {"k": [], "v": []}
    steps = []
    for t in range(x.size(-2)):
        x_t = x.narrow(-2, t, 1)
        cache["k"].append(F.linear(x_t, W_k.T))
        cache["v"].append(F.linear(x_t, W_v.T))
        q_t = F.linear(x_t, W_q.T)
        out_t, _ = scaled_dot_product_attention(q_t, torch.cat(cache["k"], -2), torch.cat(cache["v"], -2))
        steps.append(out_t)
    if not steps:
        return F.linear(x, W_v.T)
    return torch.cat(steps, dim=-2)
