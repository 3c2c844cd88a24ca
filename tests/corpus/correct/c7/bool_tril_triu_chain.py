# idiom: bool ones chained .tril().triu(1 - window) (both kept on the bool tensor) (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril().triu(1 - window)
