def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    # BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
    # END SOLUTION
