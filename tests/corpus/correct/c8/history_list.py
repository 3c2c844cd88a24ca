# idiom: keeps every hidden state in a list hs, backward from hs[-1] (h_T), float64 leaf, x_t = sin(t)
def rnn_gradient_norm(T, factor):
    """|dh_T/dh_1| by autograd for h_t = factor * h_{t-1} + x_t (a scalar RNN), as a Python float."""
    hs = [torch.tensor(0.0, dtype=torch.float64, requires_grad=True)]
    for t in range(2, T + 1):
        hs.append(factor * hs[-1] + math.sin(t))
    hs[-1].backward()
    return abs(hs[0].grad.item())
