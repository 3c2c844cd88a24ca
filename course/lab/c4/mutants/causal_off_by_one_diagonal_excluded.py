# mutant: causal off by one (diagonal excluded)
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(-1)
