# mutant: slices a mask built once for at most 16 tokens
# must fail: T = 70
_CAUSAL_16 = torch.ones(16, 16, dtype=torch.bool).tril()


def causal_mask(T, device=None):
    return _CAUSAL_16[:T, :T].to(device or "cpu")
