# mutant: takes the softmax along a fixed dim=1, the keys' axis only for 2-D input
# says: takes the softmax along a fixed axis, dim=1 or no dim= at all (F.softmax then picks dim 0 for 3-D scores and dim 1 otherwise), which is the keys' axis only for 2-D input
# must fail: no mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=1).nan_to_num(0.0)
    return weights @ v, weights
