# idiom: zeros bool matrix on device, Python loop over rows setting m[i, :i + 1] = True
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    m = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T):
        m[i, : i + 1] = True
    return m
