# mutant: the window's lower edge with the wrong sign (triu's diagonal=window − 1, j ≥ i + window − 1): with j ≤ i no key is left in a row once window > 1
# must fail: T = 7
def sliding_window_mask(T, window, device=None):
    ones = torch.ones(T, T, dtype=torch.bool, device=device)
    return torch.tril(ones) & torch.triu(ones, diagonal=window - 1)
