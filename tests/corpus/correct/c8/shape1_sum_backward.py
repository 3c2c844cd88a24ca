# idiom: float64 shape-(1,) leaf from torch.zeros(1, requires_grad=True), xs = torch.ones(T), h.sum().backward()
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h1 = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    xs = torch.ones(T + 1, dtype=torch.float64)
    h = h1
    for t in range(2, T + 1):
        h = factor * h + xs[t]
    h.sum().backward()
    return float(h1.grad.abs()[0])
