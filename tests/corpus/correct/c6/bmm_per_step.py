# idiom: flatten leading dims to (B, T, d_model), per-step torch.bmm against the growing cache, F.softmax, reshape back (self-contained)
import torch.nn.functional as F


def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    *batch, T, d_model = x.shape
    B = math.prod(batch)
    x3 = x.reshape(B, T, d_model)
    d_k, d_v = W_q.shape[-1], W_v.shape[-1]
    K_cache = x3.new_zeros(B, 0, d_k)
    V_cache = x3.new_zeros(B, 0, d_v)
    outs = []
    for t in range(T):
        x_t = x3[:, t:t + 1, :]                               # (B, 1, d_model)
        q = x_t @ W_q
        K_cache = torch.cat([K_cache, x_t @ W_k], dim=1)
        V_cache = torch.cat([V_cache, x_t @ W_v], dim=1)
        w = F.softmax(torch.bmm(q, K_cache.transpose(1, 2)) / math.sqrt(d_k), dim=-1)   # (B, 1, t + 1)
        outs.append(torch.bmm(w, V_cache))
    out = torch.cat(outs, dim=1) if outs else V_cache
    return out.reshape(*batch, T, d_v)
