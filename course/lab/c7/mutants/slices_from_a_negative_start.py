# mutant: fills row i through the slice [i - window + 1 : i + 1]: for the first rows its start is negative, and a slice counts a negative start from the end, not as 0
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T):
        mask[i, i - window + 1 : i + 1] = True
    return mask
