# idiom: a Python `if` on tensor values (zero NaN weights only when there are any): sound, and cannot run on meta tensors
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None and not mask.all():
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if torch.isnan(weights).any():
        weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v, weights
