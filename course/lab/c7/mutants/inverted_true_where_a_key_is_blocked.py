# mutant: inverted: True where a key is blocked (outside the window), not where it may be attended
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return ~((j <= i) & (j > i - window))
