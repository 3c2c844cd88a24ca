# idiom: float64 0-d leaf h_1, for-loop recurrence with x_t = 1.0, h.backward(), abs(h1.grad).item()
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h1 = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    h = h1
    for t in range(2, T + 1):
        h = factor * h + 1.0
    h.backward()
    return h1.grad.abs().item()
