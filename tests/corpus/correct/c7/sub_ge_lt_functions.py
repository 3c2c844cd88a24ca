# idiom: torch.sub / torch.ge / torch.lt / torch.bitwise_and function calls on an index-difference matrix (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    pos = torch.arange(T, device=device)
    back = torch.sub(pos.view(T, 1), pos.view(1, T))        # how many steps back key j is from query i
    return torch.bitwise_and(torch.ge(back, 0), torch.lt(back, window))
