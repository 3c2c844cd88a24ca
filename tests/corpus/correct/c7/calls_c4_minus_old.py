# idiom: causal_mask(T, device) & ~(keys window or more steps back, via tril(-window)); calls c4
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    too_old = torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=-window)   # j <= i - window
    return causal_mask(T, device=device) & ~too_old
