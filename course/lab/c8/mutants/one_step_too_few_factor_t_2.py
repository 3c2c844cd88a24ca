# mutant: one step too few (factor ** (T - 2))
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(3, T + 1):
        h = factor * h + 1.0
    h.backward()
    return abs(h_1.grad.item())
