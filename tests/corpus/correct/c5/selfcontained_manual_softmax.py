# idiom: self-contained: pre-scale Q by d_k ** -0.5, torch.where causal masking, hand-written max-subtracted softmax
def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    Q = (x @ W_q) * W_q.shape[-1] ** -0.5
    K = x @ W_k
    V = x @ W_v
    scores = Q @ K.transpose(-2, -1)
    if causal:
        T = x.shape[-2]
        keep = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = torch.where(keep, scores, float("-inf"))
    scores = scores - scores.amax(dim=-1, keepdim=True)   # the diagonal is finite, so the max is finite
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ V, weights
