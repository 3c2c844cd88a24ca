# idiom: causal_mask(T, device) AND the transposed-shift band (j - i > -window) from arange; calls c4
def sliding_window_mask(T, window, device=None):
    """(T, T) bool tensor on `device`: True where i - window < j <= i."""
    pos = torch.arange(T, device=device)
    recent = (pos[None, :] - pos[:, None]) > -window      # j - i > -window  <=>  j > i - window
    return causal_mask(T, device=device) & recent
