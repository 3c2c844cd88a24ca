# idiom: difference of index grids (i - j) with broadcasting, .ge(0)
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    pos = torch.arange(T, device=device)
    return (pos.view(-1, 1) - pos.view(1, -1)).ge(0)
