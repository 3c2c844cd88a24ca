# mutant: returns an int64 mask of 0 and 1 (.long()), not a bool one
# says: returns 0/1 numbers (an integer or float tensor), not a bool mask
# must fail: bool dtype
def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return ((j <= i) & (j > i - window)).long()
