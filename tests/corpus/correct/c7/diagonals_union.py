# idiom: union of sub-diagonals 0..window-1, each from torch.ones(T - d).diag(-d), OR-ed into a zeros bool matrix (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    m = torch.zeros(T, T, dtype=torch.bool, device=device)
    for d in range(min(window, T)):
        m = m | torch.diag(torch.ones(T - d, dtype=torch.bool, device=device), -d)
    return m
