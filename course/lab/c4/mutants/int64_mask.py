# mutant: an int64 mask of 0 and 1 (.long()), not a bool one
# says: an integer mask of 0 and 1 (.long() or .int()), not a bool one
# must fail: bool dtype
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.long, device=device).tril()
