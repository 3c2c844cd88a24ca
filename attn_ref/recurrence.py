"""The RNN side of the comparison: how a gradient fades along a path of T − 1 steps (note 3.1, §2)."""

from __future__ import annotations

from ._arrays import torch_module


def rnn_gradient_norm(T: int, factor: float) -> float:
    """|∂h_T/∂h_1| by autograd for the scalar recurrence h_t = factor·h_{t−1} + x_t.

    Each step multiplies the gradient by ∂h_t/∂h_{t−1} = factor, so the answer is |factor|^(T−1):
    Week 2's Jacobian product. Attention reaches any earlier token in one hop instead.
    """
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    torch = torch_module()
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(T, generator=generator, dtype=torch.float64)  # the inputs do not change the answer
    h_first = torch.tensor(float(x[0]), dtype=torch.float64, requires_grad=True)
    h = h_first
    for t in range(1, T):
        h = factor * h + x[t]
    if h is h_first:
        return 1.0  # T = 1: ∂h_1/∂h_1
    (grad,) = torch.autograd.grad(h, h_first)
    return abs(grad.item())
