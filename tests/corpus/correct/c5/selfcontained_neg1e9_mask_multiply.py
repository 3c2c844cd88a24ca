# idiom: self-contained: tril mask, masked_fill(-1e9), softmax, multiply by the mask, einsum for the output
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    q = x @ W_q
    k = x @ W_k
    v = x @ W_v
    T = x.shape[-2]
    scores = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(q.shape[-1])
    if causal:
        allowed = torch.tril(torch.ones(T, T, device=x.device)).bool()
        scores = scores.masked_fill(~allowed, -1e9)
        weights = torch.softmax(scores, dim=-1) * allowed
    else:
        weights = torch.softmax(scores, dim=-1)
    out = torch.einsum("...ij,...jd->...id", weights, v)
    return out, weights
