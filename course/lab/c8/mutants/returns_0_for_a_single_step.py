# mutant: returns 0 for T = 1 (no steps), where the gradient of h_1 with respect to itself is 1
# must fail: T = 1
def rnn_gradient_norm(T, factor):
    if T <= 1:
        return 0.0
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + torch.randn((), dtype=torch.float64)
    h.backward()
    return abs(h_1.grad.item())
