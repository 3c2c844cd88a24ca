# mutant: divides the output by sqrt(d_k), not the scores (the softmax sees unscaled scores)
# must fail: no mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v / math.sqrt(q.shape[-1]), weights
