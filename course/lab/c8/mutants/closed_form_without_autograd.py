# mutant: the closed form, without autograd
# must fail: by autograd
def rnn_gradient_norm(T, factor):
    return abs(factor) ** (T - 1)
