# idiom: functools.reduce over the inputs applies the recurrence; float64 leaf; backward; math.fabs
import functools


def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h1 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    inputs = [0.1 * t for t in range(2, T + 1)]
    hT = functools.reduce(lambda h, x_t: factor * h + x_t, inputs, h1)
    hT.backward()
    return math.fabs(h1.grad.item())
