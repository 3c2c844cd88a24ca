# idiom: torch.full((T, T), False), loop over the window offsets writing True on each sub-diagonal via advanced indexing (self-contained)
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    mask = torch.full((T, T), False, dtype=torch.bool, device=device)
    rows = torch.arange(T, device=device)
    for back in range(max(0, min(window, T))):
        r = rows[back:]
        mask[r, r - back] = True
    return mask
