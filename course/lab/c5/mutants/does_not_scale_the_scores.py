# mutant: does not scale the scores at all (no division by sqrt(d_k) before the softmax)
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.transpose(-2, -1)
    if causal:
        scores = scores.masked_fill(~causal_mask(x.shape[-2], device=x.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
