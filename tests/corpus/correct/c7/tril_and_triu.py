# idiom: band = ones.tril() & ones.triu(-(window - 1)) on bool ones (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    ones = torch.ones(T, T, dtype=torch.bool, device=device)
    return torch.tril(ones) & torch.triu(ones, diagonal=-(window - 1))
