# idiom: torch.full((T, T), True) then in-place tril_() on the new tensor
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    mask = torch.full((T, T), True, dtype=torch.bool, device=device)
    mask.tril_()
    return mask
