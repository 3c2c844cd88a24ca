# idiom: c3 given an extra keyword (causal=False) that c5 then uses, c4 not called
def scaled_dot_product_attention(q, k, v, mask=None, causal=False):
    """softmax(q k^T / sqrt(d_k)) v; mask (True = may attend) and/or causal."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        T_q, T_k = scores.shape[-2], scores.shape[-1]
        allowed = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
        mask = allowed if mask is None else mask & allowed
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ v, weights


def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model)."""
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, causal=causal)
