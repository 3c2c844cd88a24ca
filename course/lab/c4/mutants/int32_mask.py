# mutant: an int32 mask of 0 and 1 (.int()), not a bool one
# says: an integer mask of 0 and 1 (.long() or .int()), not a bool one
# must fail: bool dtype
def causal_mask(T, device=None):
    return torch.ones(T, T, device=device).tril().int()
