# idiom: F.linear(x, W.T) projections (nn.Linear stores the transpose); calls c3 and c4
import torch.nn.functional as F


def self_attention(x, W_q, W_k, W_v, causal=True):
    """One head of self-attention over x (..., T, d_model).

    W_q, W_k: (d_model, d_k); W_v: (d_model, d_v). Returns out (..., T, d_v), weights (..., T, T).
    """
    Q = F.linear(x, W_q.T)
    K = F.linear(x, W_k.T)
    V = F.linear(x, W_v.T)
    mask = None
    if causal:
        mask = causal_mask(x.shape[-2], device=x.device)
    return scaled_dot_product_attention(Q, K, V, mask)
