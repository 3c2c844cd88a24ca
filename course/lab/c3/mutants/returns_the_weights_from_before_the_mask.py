# mutant: returns the weights from before the mask was applied (its output uses the masked ones)
# must fail: bool mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights @ v, weights
    masked = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)
    return masked @ v, weights
