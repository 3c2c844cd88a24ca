"""The arithmetic of note 3.1: path length 1 at cost T² (§3, §4, §8)."""

from __future__ import annotations

from numbers import Integral


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def attention_scores(T: int, heads: int = 1, layers: int = 1, batch: int = 1) -> int:
    """Entries of the attention maps: one T×T map per head, per layer, per sequence."""
    T = _count("T", T)
    return _count("batch", batch) * _count("heads", heads) * _count("layers", layers) * T * T


def attention_map_bytes(T: int, bytes_per_score: int = 4, heads: int = 1, layers: int = 1, batch: int = 1) -> int:
    """Bytes to hold those maps (4 for fp32, 2 for bf16/fp16)."""
    return attention_scores(T, heads, layers, batch) * _count("bytes_per_score", bytes_per_score)


def rnn_path_length(T: int) -> int:
    """Steps from token 1 to token T through a recurrence: T − 1 (the note's "RNN path T" is its order)."""
    return _count("T", T) - 1


def attention_path_length(T: int) -> int:
    """Steps from any token to any other through attention: one hop, whatever T."""
    _count("T", T)
    return 1


def rnn_sequential_steps(T: int) -> int:
    """Cell calls an RNN/LSTM must make one after another to read T tokens: step t needs step t − 1."""
    return _count("T", T)


def attention_sequential_steps(T: int) -> int:
    """Dependent steps for one attention layer over T tokens: all queries meet all keys in one matmul."""
    _count("T", T)
    return 1


def jacobian_product(factor: float, steps: int) -> float:
    """factor**steps: the product of `steps` equal RNN Jacobian factors (Week 2)."""
    if isinstance(steps, bool) or not isinstance(steps, Integral) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    return float(factor) ** int(steps)


def rnn_jacobian_norm(T: int, factor: float) -> float:
    """|∂h_T/∂h_1| for h_t = factor·h_{t−1} + x_t in closed form: |factor|^(T−1).

    The NumPy-only twin of ``rnn_gradient_norm`` (which uses autograd), for graders that never import torch.
    """
    return abs(jacobian_product(factor, _count("T", T) - 1))
