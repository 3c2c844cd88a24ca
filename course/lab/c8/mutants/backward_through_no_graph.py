# mutant: runs the recurrence under torch.no_grad(), so backward finds no graph
# says: calls backward on an h_T that autograd did not track from h_1 (no graph: the loop under torch.no_grad(), h_1 made without requires_grad=True, or h detached in the loop)
# its error names it
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    with torch.no_grad():
        for t in range(2, T + 1):
            h = factor * h + 1.0
    h.backward()
    return abs(h_1.grad.item())
