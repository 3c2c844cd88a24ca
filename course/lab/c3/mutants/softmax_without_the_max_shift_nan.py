# mutant: a softmax written by hand, without the max shift, NaN on overflow
# says: a softmax written by hand, without subtracting each row's max
# must fail: large scores
# the form students write (softmax_without_the_max_shift.py has a nan_to_num): inf / inf stays NaN
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    e = scores.exp()
    if mask is not None:
        e = e * mask
    total = e.sum(dim=-1, keepdim=True)
    weights = e / torch.where(total == 0, torch.ones_like(total), total)
    return weights @ v, weights
