# mutant: returns the mask with a batch axis, (1, T, T)
# says: returns the mask with leading axes of size 1 (such as (1, 1, T, T), for broadcasting over batch and heads), not a (T, T) one
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril().unsqueeze(0)
