"""Boolean attention masks: True = the query may attend to the key.

NumPy when ``device`` is None, torch on ``device`` otherwise (see the package docstring).
"""

from __future__ import annotations

import numpy as np

from ._arrays import torch_module


def _positions(q_start: int, q_len: int, k_start: int, k_len: int, device):
    """Absolute query and key indices as grids of shapes (q_len, 1) and (1, k_len), NumPy or torch."""
    if device is None:
        return np.arange(q_start, q_start + q_len)[:, None], np.arange(k_start, k_start + k_len)[None, :]
    torch = torch_module()
    i = torch.arange(q_start, q_start + q_len, device=device)[:, None]
    return i, torch.arange(k_start, k_start + k_len, device=device)[None, :]


def causal_block(q_start: int, q_len: int, k_start: int, k_len: int, offset: int, device=None):
    """One tile of a causal mask: query i sees key j when j <= i + offset (offset = Tk − Tq).

    Lets chunked attention mask a tile without building the whole (Tq, Tk) mask.
    """
    i, j = _positions(q_start, q_len, k_start, k_len, device)
    return j <= i + offset


def _check_length(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def causal_mask(Tq: int, Tk: int | None = None, device=None):
    """(Tq, Tk) bool: query i sees keys 0 … i + (Tk − Tq) (bottom-right alignment).

    Tk defaults to Tq, giving True on and below the diagonal.
    """
    Tq = _check_length("Tq", Tq)
    Tk = Tq if Tk is None else _check_length("Tk", Tk)
    return causal_block(0, Tq, 0, Tk, Tk - Tq, device)


def window_mask(Tq: int, Tk: int, window: int, device=None):
    """(Tq, Tk) bool: causal (bottom-right) and at most ``window`` keys back, the query's own included."""
    window = _check_length("window", window)
    i, j = _positions(0, Tq, 0, Tk, device)
    last = i + (Tk - Tq)  # the newest key this query may see
    return (j <= last) & (j > last - window)


def sliding_window_mask(T: int, window: int, device=None):
    """(T, T) bool: query i sees keys i − window + 1 … i (window keys, fewer near the start)."""
    T = _check_length("T", T)
    return window_mask(T, T, window, device)
