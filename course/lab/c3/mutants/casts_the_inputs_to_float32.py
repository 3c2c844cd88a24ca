# mutant: casts q, k and v to float32 (.float()) and never back, so float64 inputs come back as float32
# must fail: float64 precision kept
def scaled_dot_product_attention(q, k, v, mask=None):
    q, k, v = q.float(), k.float(), v.float()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
