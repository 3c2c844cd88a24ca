def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    # BEGIN SOLUTION
    i = torch.arange(T, device=device)[:, None]  # queries, as a column
    j = torch.arange(T, device=device)[None, :]  # keys, as a row
    return (j <= i) & (j > i - window)
    # END SOLUTION
