# mutant: two-sided window, built on the CPU
# says: a two-sided window (keys after the query are let in too)
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (i - j).abs() < window
