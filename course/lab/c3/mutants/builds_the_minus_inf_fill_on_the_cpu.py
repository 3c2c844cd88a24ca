# mutant: builds its -inf fill with torch.full and no device
# says: makes a tensor without device= (torch.full, torch.zeros, ...), which puts it on the CPU, and mixes it with the inputs' tensors, which may be on another device
# its error names it
# must fail: inputs' device
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, torch.full(scores.shape, float("-inf"), dtype=scores.dtype))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
