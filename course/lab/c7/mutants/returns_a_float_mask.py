# mutant: returns a float mask of 0.0 and 1.0 (built from torch.ones), not a bool one
# says: returns 0/1 numbers (an integer or float tensor), not a bool mask
# must fail: bool dtype
def sliding_window_mask(T, window, device=None):
    ones = torch.ones(T, T, device=device)
    return ones.tril() - ones.tril(-window)
