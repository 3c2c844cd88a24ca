# mutant: expands the mask as a (batch, T_k) key-padding mask (mask[:, None, None, :], as Hugging Face code does), which misplaces the (T_q, T_k) and (B, 1, T_q, T_k) masks the lab passes
# must fail: bool mask
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask[:, None, None, :]
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights
