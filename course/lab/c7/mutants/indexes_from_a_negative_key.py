# mutant: marks row i's keys i − window + 1 … i by index without stopping at 0: in the first rows a negative index counts from the end, letting in the last keys
# its error names it
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T):
        for j in range(i - window + 1, i + 1):
            mask[i, j] = True
    return mask
