# mutant: a window of w − 1 keys: the query and only the w − 2 keys before it (the earliest key of the window is left out)
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j <= i) & (j > i - window + 1)
