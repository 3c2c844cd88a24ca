# mutant: makes h_1 once, at module level, and never zeroes its .grad, so each call adds its gradient to the earlier calls'
# keeps state between calls
# must fail: T = 1
h_1 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)


def rnn_gradient_norm(T, factor):
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + 1.0
    h.backward()
    return abs(h_1.grad.item())
