# idiom: x[..., t, :] without keepdim, einsum scores "...d,...td->...t" against the cache, torch.stack outputs on dim -2 (self-contained)
def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Causal self-attention outputs (..., T, d_v), computed one token at a time with a key/value cache."""
    T = x.shape[-2]
    d_k = W_q.shape[-1]
    k_list, v_list, out_list = [], [], []
    for t in range(T):
        xt = x[..., t, :]                                     # (..., d_model)
        q = torch.einsum("...m,mk->...k", xt, W_q)
        k_list.append(torch.einsum("...m,mk->...k", xt, W_k))
        v_list.append(torch.einsum("...m,mv->...v", xt, W_v))
        K = torch.stack(k_list, dim=-2)                       # (..., t + 1, d_k)
        V = torch.stack(v_list, dim=-2)
        s = torch.einsum("...k,...tk->...t", q, K) / math.sqrt(d_k)
        a = torch.softmax(s, dim=-1)
        out_list.append(torch.einsum("...t,...tv->...v", a, V))
    if T == 0:
        return (x @ W_v)[..., :0, :]
    return torch.stack(out_list, dim=-2)
