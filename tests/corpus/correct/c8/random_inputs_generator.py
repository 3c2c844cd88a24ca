# idiom: float64 leaf, random inputs x_t from a local torch.Generator (leaves the global RNG alone), torch.autograd.grad
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    g = torch.Generator().manual_seed(1234)
    xs = torch.randn(max(T - 1, 0), dtype=torch.float64, generator=g)
    h1 = torch.randn((), dtype=torch.float64, generator=g).requires_grad_(True)
    h = h1
    for x_t in xs:
        h = factor * h + x_t
    grad = torch.autograd.grad(h, h1)[0]
    return abs(grad.item())
