# mutant: takes the softmax in float32 (scores.float(), or dtype=torch.float32) and casts back, so float64 scores lose their precision
# must fail: float64 precision kept
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores.float(), dim=-1).to(scores.dtype).nan_to_num(0.0)
    return weights @ v, weights
