"""One code path for NumPy arrays and torch tensors, via the array API standard.

array_api_compat checks ``sys.modules`` before it looks for torch, so NumPy inputs never import it.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from array_api_compat import array_namespace, is_torch_array
from array_api_compat import device as device_of

__all__ = ["array_namespace", "device_of", "is_torch_array", "namespace", "like", "mask_like", "inv_sqrt"]


def namespace(*arrays):
    """The array namespace shared by ``arrays`` (None entries ignored); TypeError names a mix-up."""
    present = [a for a in arrays if a is not None]
    kinds = {is_torch_array(a) for a in present}
    if len(kinds) > 1:
        raise TypeError("attn_ref: mix of NumPy arrays and torch tensors; pass one kind")
    try:
        return array_namespace(*present)
    except TypeError as exc:
        raise TypeError(f"attn_ref expects NumPy arrays or torch tensors: {exc}") from None


def like(value, reference):
    """``value`` (array or tensor) as the kind and device of ``reference``; bool masks stay bool."""
    if is_torch_array(reference):
        torch = sys.modules["torch"]
        return torch.as_tensor(value, device=reference.device)
    if is_torch_array(value):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def mask_like(mask, reference):
    """A boolean mask as the kind and device of ``reference``; rejects non-boolean masks."""
    mask = like(mask, reference)
    if str(mask.dtype) not in ("bool", "torch.bool"):
        raise TypeError(f"attn_ref: a mask must be boolean (True = may attend), got dtype {mask.dtype}")
    return mask


def inv_sqrt(n: int) -> float:
    """1/sqrt(n) as a Python float, so float32 inputs stay float32 (a NumPy float64 scalar would promote)."""
    return 1.0 / math.sqrt(n)


def torch_module():
    """Import torch on demand (only when a device is asked for)."""
    import torch

    return torch
