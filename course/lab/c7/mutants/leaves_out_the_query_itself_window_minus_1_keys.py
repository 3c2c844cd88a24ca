# mutant: leaves the query itself out (j < i rather than j ≤ i): only the window − 1 keys before it
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j < i) & (j > i - window)
