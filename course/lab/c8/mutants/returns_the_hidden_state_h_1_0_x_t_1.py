# mutant: returns |h_T| from h_1 = 0, x_t = 1
# says: returns the hidden state |h_T| (the forward value), not the gradient of h_T with respect to h_1
# must fail: T = 50
def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(2, T + 1):
        h = factor * h + 1
    h.backward()
    return abs(h.item())
