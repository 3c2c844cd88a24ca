# idiom: torch.meshgrid(indexing="ij") grids, torch.logical_and(j <= i, j > i - window) (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    r = torch.arange(T, device=device)
    i, j = torch.meshgrid(r, r, indexing="ij")
    return torch.logical_and(j <= i, j > i - window)
