# idiom: float32 (default dtype) leaf, torch.autograd.grad(h_T, h_1), x_t = 0, float(abs(g))
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h_1 = torch.tensor(1.0, requires_grad=True)
    h = h_1
    for _ in range(T - 1):
        h = factor * h
    (grad,) = torch.autograd.grad(h, h_1)
    return float(abs(grad))
