# mutant: the upper triangle (triu)
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu()
