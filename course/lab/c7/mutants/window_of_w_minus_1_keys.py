# mutant: window of w − 1 keys (the query itself not counted among its w keys)
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j <= i) & (j > i - window + 1)
