# mutant: returns an additive float mask of 0 and -inf (nn.Transformer.generate_square_subsequent_mask)
# says: returns an additive float mask (0 where a key is allowed, -inf or a large negative number in the future), not a bool one
# must fail: T = 5
def causal_mask(T, device=None):
    return torch.triu(torch.full((T, T), float("-inf"), device=device), diagonal=1)
