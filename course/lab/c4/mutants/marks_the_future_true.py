# mutant: marks the future True (the positions to block, strictly above the diagonal), the inverse of True = may attend
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
