# idiom: the docstring's inequality written literally: (i - window < j) & (j <= i) with column/row index tensors (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    i = torch.arange(T, device=device).unsqueeze(1)
    j = torch.arange(T, device=device).unsqueeze(0)
    return (i - window < j) & (j <= i)
