# mutant: a softmax written by hand, without subtracting each row's max
# must fail: large scores
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    e = scores.exp()
    weights = (e / e.sum(dim=-1, keepdim=True)).nan_to_num(0.0)
    return weights @ v, weights
