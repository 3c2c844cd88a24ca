# idiom: self-contained: fused QKV weights with torch.cat and tensor_split at [d_k, 2 d_k], F.softmax, bias of -inf via triu
import torch.nn.functional as F


def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    d_k = W_q.shape[1]
    W = torch.cat([W_q, W_k, W_v], dim=1)
    q, k, v = torch.tensor_split(x @ W, [d_k, 2 * d_k], dim=-1)
    T = x.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if causal:
        bias = torch.full((T, T), float("-inf"), dtype=scores.dtype, device=x.device).triu(1)
        scores = scores + bias
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights
