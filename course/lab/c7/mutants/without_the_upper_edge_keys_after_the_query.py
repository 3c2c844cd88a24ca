# mutant: only the window's lower edge (j > i − window), no upper one: every key after the query is let in
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return j > i - window
