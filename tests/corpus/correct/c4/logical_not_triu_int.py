# idiom: torch.logical_not(torch.triu(int ones, 1)) on an integer matrix
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    return torch.logical_not(torch.triu(torch.ones(T, T, dtype=torch.int64, device=device), 1))
