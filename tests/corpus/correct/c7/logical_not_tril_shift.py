# idiom: torch.logical_and(torch.tril(ones, 0), torch.logical_not(torch.tril(ones, -window))) on int ones (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    ones = torch.ones(T, T, dtype=torch.int32, device=device)
    return torch.logical_and(torch.tril(ones, 0), torch.logical_not(torch.tril(ones, -window)))
