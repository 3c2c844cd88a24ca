# mutant: the band above the diagonal: each query sees itself and the keys after it
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j >= i) & (j < i + window)
