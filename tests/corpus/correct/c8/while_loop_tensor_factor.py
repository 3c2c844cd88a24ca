# idiom: factor as a float64 tensor constant, while loop with a counter, torch.mul/torch.add, backward on h_T
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    a = torch.tensor(factor, dtype=torch.float64)
    h_first = torch.ones((), dtype=torch.float64, requires_grad=True)
    h = h_first
    t = 1
    while t < T:
        h = torch.add(torch.mul(a, h), 0.25)
        t += 1
    h.backward()
    return float(h_first.grad.abs())
