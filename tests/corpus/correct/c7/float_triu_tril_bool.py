# idiom: float ones, .triu(1 - window).tril() chained, then .bool() (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    return torch.ones(T, T, device=device).triu(1 - window).tril().bool()
