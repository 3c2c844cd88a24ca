# mutant: float mask
# must fail: bool dtype
def causal_mask(T, device=None):
    return torch.ones(T, T, device=device).tril()
