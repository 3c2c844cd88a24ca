# idiom: ~(float triu(1) == 1): the future is the strictly upper triangle, invert it
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    upper = torch.triu(torch.ones(T, T, device=device), diagonal=1)
    return ~(upper == 1)
