# mutant: scales the caller's q in place
# must fail: leaves q, k, v
def scaled_dot_product_attention(q, k, v, mask=None):
    q.div_(math.sqrt(q.shape[-1]))
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
