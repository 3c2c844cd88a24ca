# mutant: returns an additive float mask of 0 and -1e9
# says: returns an additive float mask (0 where a key is allowed, -inf or a large negative number in the future), not a bool one
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.zeros(T, T, device=device).masked_fill(torch.ones(T, T, dtype=torch.bool, device=device).triu(1), -1e9)
