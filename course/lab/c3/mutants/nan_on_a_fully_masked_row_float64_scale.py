# mutant: NaN on a fully masked row, float64 scale
# says: leaves NaN on a fully masked row (0 / 0 in its softmax or its division)
# must fail: fully masked
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / torch.sqrt(torch.tensor(q.shape[-1], dtype=torch.float64))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
