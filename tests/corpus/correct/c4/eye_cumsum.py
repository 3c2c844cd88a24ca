# idiom: cumulative sum of the identity down the rows (row i has ones at columns 0..i), then > 0
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    return torch.eye(T, device=device).cumsum(dim=0) > 0
