# mutant: assumes 4-D input: k.transpose(2, 3)
# says: assumes 4-D (B, H, T, d) input (a fixed dimension 3, as in k.transpose(2, 3) or dim=3, or four sizes unpacked from q.shape), which breaks 2-D and 3-D input
# its error names it
# must fail: float64 precision kept
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(2, 3) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
