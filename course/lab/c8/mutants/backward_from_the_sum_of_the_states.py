# mutant: backpropagates from the sum of every hidden state, not from h_T
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h, total = h_1, h_1
    for t in range(2, T + 1):
        h = factor * h + 1.0
        total = total + h
    total.backward()
    return abs(h_1.grad.item())
