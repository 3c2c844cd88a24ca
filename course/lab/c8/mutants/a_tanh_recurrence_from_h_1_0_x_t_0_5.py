# mutant: a tanh recurrence from h_1 = 0.0, x_t = 0.5
# says: runs a tanh recurrence, h_t = tanh(factor · h_(t−1) + x_t), not the linear one of the prompt
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = torch.tanh(factor * h + 0.5)
    h.backward()
    return abs(h_1.grad.item())
