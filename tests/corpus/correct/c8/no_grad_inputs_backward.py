# idiom: inputs drawn under torch.no_grad() from a seeded generator, float64 leaf, backward with an explicit gradient tensor
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    with torch.no_grad():
        xs = torch.rand(T + 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    h_1 = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    h_t = h_1
    for t in range(2, T + 1):
        h_t = factor * h_t + xs[t]
    h_t.backward(torch.tensor(1.0, dtype=torch.float64))
    return abs(float(h_1.grad))
