# mutant: folds the scale into the caller's W_q, in place
# must fail: leaves x and the weights unchanged
def self_attention(x, W_q, W_k, W_v, causal=True):
    W_q.mul_(W_q.shape[-1] ** -0.5)
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.transpose(-2, -1)
    if causal:
        T = x.shape[-2]
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
