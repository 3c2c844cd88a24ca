# idiom: h_1 leaf created with torch.randn(1, dtype=float64, generator=...), time-indexed loop t = 2..T with torch.as_tensor inputs, autograd.grad + .sum()
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    gen = torch.Generator().manual_seed(7)
    h1 = torch.randn(1, dtype=torch.float64, generator=gen, requires_grad=True)
    h = h1
    for t in range(2, T + 1):
        x_t = torch.as_tensor(0.01 * t, dtype=torch.float64)
        h = factor * h + x_t
    grad, = torch.autograd.grad(h.sum(), h1)
    return float(grad.abs().sum())
