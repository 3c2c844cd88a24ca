# mutant: a uint8 mask of 0 and 1, not a bool one
# must fail: bool dtype
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.uint8, device=device).tril()
