# mutant: adds a head axis to every mask (mask.unsqueeze(1)), right only for a (B, T_q, T_k) mask
# its error names it
# must fail: bool mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask.unsqueeze(1)
        scores = torch.where(mask, scores, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
