# idiom: float32 leaf torch.ones(()) requires_grad, x_t = torch.zeros(()), h.backward(), h1.grad.abs().item()
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    h1 = torch.ones((), requires_grad=True)
    h = h1
    for _ in range(2, T + 1):
        h = factor * h + torch.zeros(())
    h.backward()
    return h1.grad.abs().item()
