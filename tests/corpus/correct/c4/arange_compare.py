# idiom: arange comparison, query index [:, None] >= key index [None, :]
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    idx = torch.arange(T, device=device)
    return idx[:, None] >= idx[None, :]
