# idiom: zeros bool matrix, Python loop over rows filling m[i, max(0, i - window + 1): i + 1] = True (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    m = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T):
        start = max(0, i - window + 1)
        if start <= i:
            m[i, start:i + 1] = True
    return m
