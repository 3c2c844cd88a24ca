# idiom: inputs x = torch.linspace(...) float64 indexed per step, leaf h_1 via requires_grad_(), grad_outputs=torch.ones_like
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    x = torch.linspace(-1.0, 1.0, steps=T + 1, dtype=torch.float64)
    h1 = torch.zeros((), dtype=torch.float64).requires_grad_()
    h = h1
    for t in range(2, T + 1):
        h = factor * h + x[t]
    (g,) = torch.autograd.grad(outputs=h, inputs=h1, grad_outputs=torch.ones_like(h))
    return g.abs().item()
