# mutant: built on the CPU, whatever device is asked for
# must fail: device
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (j <= i) & (j > i - window)
