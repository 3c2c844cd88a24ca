# idiom: a step(h, x) helper called in a loop, float64 leaf, torch.autograd.backward(h_T), abs of .grad
def _rnn_step(h, x_t, factor):
    return factor * h + x_t


def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h1 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    h = h1
    for t in range(2, T + 1):
        h = _rnn_step(h, float(t), factor)
    torch.autograd.backward(h)
    return float(torch.abs(h1.grad))
