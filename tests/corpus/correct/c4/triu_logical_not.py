# idiom: strictly-upper triangle torch.triu(..., diagonal=1) marks the future, then .logical_not()
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
    return future.logical_not()
