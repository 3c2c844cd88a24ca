# idiom: keys row vector <= queries column vector with unsqueeze and torch.le
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    queries = torch.arange(T, device=device).unsqueeze(1)
    keys = torch.arange(T, device=device).unsqueeze(0)
    return torch.le(keys, queries)
