# mutant: mask built on the CPU
# must fail: device
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool).tril()
