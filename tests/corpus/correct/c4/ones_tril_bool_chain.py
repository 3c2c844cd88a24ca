# idiom: method chain torch.ones(...).tril().bool() with (T, T) passed as a tuple
def causal_mask(T, device=None):
    """(T, T) bool tensor on `device`: True where key j <= query i (on and below the diagonal)."""
    return torch.ones((T, T), device=device).tril().bool()
