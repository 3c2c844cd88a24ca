# mutant: masks with -1e9 instead of -inf, so a fully masked row gets uniform weights, not zeros
# says: masks with a large finite negative number (-1e9, finfo.min) instead of -inf, so a fully masked row gets uniform weights, not zeros
# must fail: fully masked
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
