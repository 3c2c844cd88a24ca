# mutant: multiplies the scores by the mask (a masked score becomes 0, not -inf, and keeps its weight)
# must fail: bool mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
