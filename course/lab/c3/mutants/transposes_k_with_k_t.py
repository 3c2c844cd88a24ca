# mutant: transposes k with k.t() (torch.t), which accepts only 2-D tensors, so batched or multi-head input raises
# its error names it
# must fail: no mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.t() / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
