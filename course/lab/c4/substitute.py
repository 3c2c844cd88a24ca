def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
