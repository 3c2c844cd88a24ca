# mutant: the signed gradient, without the absolute value
# must fail: a negative factor
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + torch.randn((), dtype=torch.float64)
    h.backward()
    return h_1.grad.item()
