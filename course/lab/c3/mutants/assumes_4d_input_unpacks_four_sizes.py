# mutant: assumes 4-D input: unpacks four sizes of q
# says: assumes 4-D (B, H, T, d) input (a fixed dimension 3, as in k.transpose(2, 3) or dim=3, or four sizes unpacked from q.shape), which breaks 2-D and 3-D input
# its error names it
# must fail: float64 precision kept
def scaled_dot_product_attention(q, k, v, mask=None):
    _, _, _, d_k = q.shape
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
