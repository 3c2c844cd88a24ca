# mutant: returns a 0/1 integer mask, not a bool one
# must fail: bool dtype
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return ((j <= i) & (j > i - window)).long()
