# mutant: differentiates with respect to the factor (dh_T/dfactor), from h_1 = 1 with x_t = 1
# says: differentiates h_T with respect to the factor (the factor made the leaf with requires_grad=True), not with respect to h_1
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    w = torch.tensor(float(factor), dtype=torch.float64, requires_grad=True)
    h = torch.tensor(1.0, dtype=torch.float64)
    for t in range(2, T + 1):
        h = w * h + 1.0
    h.backward()
    return abs(w.grad.item())
