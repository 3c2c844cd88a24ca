# mutant: scales by the square root of a sequence length (the number of queries or keys), not of d_k: for (B, H, T, d_k) input, q.shape[2] is T
# must fail: no mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[2])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
