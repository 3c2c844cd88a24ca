# idiom: self-contained: flatten to 3-D, torch.bmm, scale by torch.sqrt(torch.tensor(d_k)) (float32 constant), tril mask with masked_fill
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    *batch, T, d_model = x.shape
    n = math.prod(batch)
    x3 = x.reshape(n, T, d_model)
    Q, K, V = x3 @ W_q, x3 @ W_k, x3 @ W_v
    d_k = Q.shape[-1]
    scores = torch.bmm(Q, K.transpose(1, 2)) / torch.sqrt(torch.tensor(d_k))
    if causal:
        allowed = torch.ones(T, T, device=x.device).tril().bool()
        scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.bmm(weights, V)
    return out.reshape(*batch, T, V.shape[-1]), weights.reshape(*batch, T, T)
