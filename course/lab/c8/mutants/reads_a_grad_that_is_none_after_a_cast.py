# mutant: casts h_1 after requires_grad=True (.double()), so the h_1 kept is no leaf and its .grad is None
# says: reads .grad of a tensor no gradient reached (it is None): the h_1 made with requires_grad=True is not the leaf read (a cast or copy after requires_grad=True) or is cut off from h_T (a detach in the loop)
# its error names it
# must fail: T = 1
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(1.0, requires_grad=True).double()
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + 1.0
    h.backward()
    return abs(h_1.grad.item())
