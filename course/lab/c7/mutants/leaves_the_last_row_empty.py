# mutant: fills the mask row by row and leaves the last row empty (range(T - 1))
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T - 1):
        mask[i, max(0, i - window + 1) : i + 1] = True
    return mask
