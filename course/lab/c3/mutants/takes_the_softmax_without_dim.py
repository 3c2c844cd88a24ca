# mutant: calls F.softmax(scores) without dim=, so PyTorch picks the axis from the number of dimensions (dim 0 for 3-D scores, dim 1 for 2-D and 4-D), not the keys' axis
# says: takes the softmax along a fixed axis, dim=1 or no dim= at all (F.softmax then picks dim 0 for 3-D scores and dim 1 otherwise), which is the keys' axis only for 2-D input
# must fail: bool mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nn.functional.softmax(scores).nan_to_num(0.0)
    return weights @ v, weights
