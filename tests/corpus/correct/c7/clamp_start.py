# idiom: per-row first allowed key start_i = clamp(i - window + 1, min=0), then start_i <= j <= i (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    i = torch.arange(T, device=device)
    start = (i - window + 1).clamp(min=0)
    j = torch.arange(T, device=device)
    return (j[None, :] >= start[:, None]) & (j[None, :] <= i[:, None])
