# mutant: inverts the caller's mask in place (mask.logical_not_()) to find the masked-out keys
# must fail: leaves q, k, v and the mask unchanged
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not_(), float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
