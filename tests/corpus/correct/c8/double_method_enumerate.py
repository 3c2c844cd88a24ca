# idiom: torch.tensor(...).double() then .requires_grad_() makes the leaf; loop with enumerate over a Python list of inputs
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h1 = torch.tensor([1.0]).double().requires_grad_()
    inputs = [(-1.0) ** t for t in range(2, T + 1)]
    h = h1
    for _, x_t in enumerate(inputs):
        h = factor * h + x_t
    h.backward(torch.ones_like(h))
    return float(h1.grad.abs().squeeze())
