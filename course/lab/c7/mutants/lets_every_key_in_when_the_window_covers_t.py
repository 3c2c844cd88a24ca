# mutant: with window >= T lets every query see every key, those after it too (the causal edge, no key after the query, is lost there)
# must fail: window >= T
def sliding_window_mask(T, window, device=None):
    if window >= T:
        return torch.ones(T, T, dtype=torch.bool, device=device)
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j <= i) & (j > i - window)
