# idiom: float32 leaf and float32 factor tensor torch.tensor(factor), x_t = 1, autograd.grad, .item()
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    w = torch.tensor(factor, dtype=torch.float32)
    h1 = torch.tensor(0.0, dtype=torch.float32, requires_grad=True)
    h = h1
    for t in range(2, T + 1):
        h = w * h + torch.tensor(1.0)
    return torch.autograd.grad(h, h1)[0].abs().item()
