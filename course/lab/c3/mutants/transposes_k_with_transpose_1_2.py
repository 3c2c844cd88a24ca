# mutant: transposes k with k.transpose(1, 2), right only for 3-D input
# says: transposes k along fixed dimensions (k.T reverses all of them; k.transpose(1, 2) is right only for 3-D input)
# its error names it
# must fail: fully masked
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
