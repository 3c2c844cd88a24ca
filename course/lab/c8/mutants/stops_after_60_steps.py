# mutant: stops after 60 steps
# must fail: T = 100
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, min(T, 60) + 1):
        h = factor * h
    h.backward()
    return abs(h_1.grad.item())
