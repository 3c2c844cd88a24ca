# idiom: torch.tril on a float ones matrix, then .bool()
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    return torch.tril(torch.ones(T, T, device=device)).bool()
