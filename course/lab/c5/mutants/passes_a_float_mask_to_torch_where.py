# mutant: passes a float 0/1 causal mask (torch.ones(T, T).tril()) to torch.where, which expects a bool one (True = may attend)
# says: passes a float 0/1 causal mask (torch.ones(T, T).tril()) where a bool one is expected (True = may attend)
# its error names it
# must fail: causal (default)
def self_attention(x, W_q, W_k, W_v, causal=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        T = x.shape[-2]
        scores = torch.where(torch.ones(T, T, device=x.device).tril(), scores, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
