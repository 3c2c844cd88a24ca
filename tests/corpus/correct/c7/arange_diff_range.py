# idiom: d = i - j from arange broadcasting, (d >= 0) & (d < window) (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    idx = torch.arange(T, device=device)
    d = idx[:, None] - idx[None, :]
    return (d >= 0) & (d < window)
