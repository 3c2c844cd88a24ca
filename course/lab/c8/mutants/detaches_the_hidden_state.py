# mutant: detaches the hidden state at each step, so no gradient reaches h_1 (it returns 0)
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + torch.randn((), dtype=torch.float64)
        if t < T:
            h = h.detach().requires_grad_()  # the last step stays in a graph, so backward runs (autograd is used)
    h.backward()
    return 0.0 if h_1.grad is None else abs(h_1.grad.item())
