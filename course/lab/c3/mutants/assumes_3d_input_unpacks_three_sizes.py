# mutant: assumes 3-D input: unpacks three sizes of q
# says: assumes 3-D (B, T, d) input (torch.bmm, or three sizes unpacked from q.shape), which breaks 2-D and 4-D input
# its error names it
# must fail: no mask
def scaled_dot_product_attention(q, k, v, mask=None):
    _, _, d_k = q.shape
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
