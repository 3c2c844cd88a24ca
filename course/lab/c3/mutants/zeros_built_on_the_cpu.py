# mutant: builds its zeros for empty rows on the CPU
# says: makes a tensor without device= (torch.full, torch.zeros, ...), which puts it on the CPU, and mixes it with the inputs' tensors, which may be on another device
# its error names it
# must fail: inputs' device
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros(weights.shape, dtype=weights.dtype), weights)
    return weights @ v, weights
