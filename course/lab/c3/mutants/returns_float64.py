# mutant: returns float64 for float32 inputs
# must fail: float32 in, float32 out
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v.double(), weights
