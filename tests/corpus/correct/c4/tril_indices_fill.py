# idiom: torch.tril_indices gives the (row, col) pairs on/below the diagonal; write True there in a zeros bool matrix
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    rows, cols = torch.tril_indices(T, T, device=device)
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    mask[rows, cols] = True
    return mask
