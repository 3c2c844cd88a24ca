"""Public checks of c8: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import attn_ref

TWO_STEPS = attn_ref.rnn_jacobian_norm(3, 0.5)
TEN_STEPS = attn_ref.rnn_jacobian_norm(11, 0.8)


def test_c8_is_a_float_below_one(rnn_gradient_norm):
    # The hidden checks' rule for a returned number: a Python float, a NumPy float or a 0-d float tensor.
    import numbers

    import numpy as np
    import torch
    g = rnn_gradient_norm(10, 0.9)
    if isinstance(g, torch.Tensor):
        assert g.ndim == 0 and g.is_floating_point(), f"returned a tensor of shape {tuple(g.shape)}; return one number (use .item())"
        g = g.item()
    assert isinstance(g, (float, np.floating)) or isinstance(g, numbers.Real) and not isinstance(g, bool), \
        "return a Python float (use .item())"
    assert 0 < g < 1, "with factor 0.9 the gradient shrinks"
    assert rnn_gradient_norm(4, -0.5) > 0, "with a negative factor, return the absolute value of the gradient"


def test_c8_worked_examples(rnn_gradient_norm):
    import math
    assert math.isclose(rnn_gradient_norm(3, 0.5), TWO_STEPS, rel_tol=1e-6), \
        "rnn_gradient_norm(3, 0.5) should be 0.25: two steps from h_1 to h_3"
    assert math.isclose(rnn_gradient_norm(11, 0.8), TEN_STEPS, rel_tol=1e-5), \
        "rnn_gradient_norm(11, 0.8) should match the worked example"


def test_c8_computes_the_gradient_by_autograd(rnn_gradient_norm):
    # The task asks for autograd's gradient, not a formula for it: the hidden checks give a point for it.
    import torch
    backward, grad, called = torch.autograd.backward, torch.autograd.grad, []

    def watched(original):
        def call(*args, **kwargs):
            called.append(original.__name__)
            return original(*args, **kwargs)
        return call

    torch.autograd.backward, torch.autograd.grad = watched(backward), watched(grad)
    try:
        rnn_gradient_norm(5, 0.9)
    finally:
        torch.autograd.backward, torch.autograd.grad = backward, grad
    assert called, ("the gradient was not computed by autograd: build h_T from h_1 with requires_grad=True, "
                    "then call .backward() (a closed form such as factor ** (T - 1) earns the values, not autograd's point)")
