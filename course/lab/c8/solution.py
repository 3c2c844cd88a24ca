def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    # BEGIN SOLUTION
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + torch.randn((), dtype=torch.float64)  # x_t does not change the gradient
    h.backward()  # for T = 1, h is h_1 and the gradient is 1
    return abs(h_1.grad.item())
    # END SOLUTION
