# mutant: lets each query see the next token too (tril with diagonal=1)
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=1)
