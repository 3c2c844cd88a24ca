# mutant: detaches the hidden state in the loop and reads h_1.grad, which is None
# says: reads .grad of a tensor no gradient reached (it is None): the h_1 made with requires_grad=True is not the leaf read (a cast or copy after requires_grad=True) or is cut off from h_T (a detach in the loop)
# its error names it
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h_prev = h if t == 2 else h.detach().requires_grad_()
        h = factor * h_prev + 1.0
    h.backward()
    return abs(h_1.grad.item())
