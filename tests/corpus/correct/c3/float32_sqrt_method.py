# idiom: scale tensor torch.tensor(d_k, dtype=torch.float32).sqrt(), F.softmax, -1e9 fill and multiply by mask.to(dtype) (self-contained)
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend).

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns out (..., T_q, d_v) and weights (..., T_q, T_k), in the inputs' dtype and on their device.
    """
    scale = torch.tensor(q.shape[-1], dtype=torch.float32).sqrt()
    logits = q @ k.transpose(-2, -1) / scale
    if mask is not None:
        logits = logits.masked_fill(~mask, -1e9)
    attn = F.softmax(logits, dim=-1)
    if mask is not None:
        attn = attn * mask.to(attn.dtype)
    return attn @ v, attn
