# idiom: self-contained: matmul, math.sqrt scale, triu(1) future mask filled with -inf, torch.softmax
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    T, d_k = x.shape[-2], Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    if causal:
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))   # the diagonal is always allowed: no empty row
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
