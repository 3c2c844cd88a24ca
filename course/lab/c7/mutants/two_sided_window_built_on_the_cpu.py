# mutant: two-sided window, built on the CPU
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (i - j).abs() < window
