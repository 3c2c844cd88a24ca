# idiom: torch.meshgrid(..., indexing="ij") grids of query and key indices, then i >= j
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    r = torch.arange(T, device=device)
    i, j = torch.meshgrid(r, r, indexing="ij")
    return i >= j
