# mutant: gives every row `window` keys: the first rows get keys 0 … window − 1, keys after the query included, rather than fewer keys near the start
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    start = torch.clamp(i - window + 1, min=0)
    end = torch.clamp(start + window - 1, max=T - 1)
    return (j >= start) & (j <= end)
