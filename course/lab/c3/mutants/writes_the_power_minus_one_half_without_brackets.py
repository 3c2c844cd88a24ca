# mutant: writes the power 1/2 without brackets: Python reads d_k ** -1/2 as (d_k ** -1) / 2 and x / d_k ** 1/2 as x / d_k / 2, not a square root
# must fail: no mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -1/2
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
