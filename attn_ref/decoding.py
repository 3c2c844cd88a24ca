"""Token-by-token decoding with a key/value cache: each past token is projected once.

At decode time each new token costs O(T) against the past instead of recomputing O(T²) (note 3.1, §3).
This is inference; it does not change the training cost of a full attention map.
"""

from __future__ import annotations

from ._arrays import device_of, namespace
from .attention import scaled_dot_product_attention


class KVCache:
    """Preallocated keys (..., capacity, d_k) and values (..., capacity, d_v) of the tokens seen so far."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"KVCache capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.length = 0
        self._keys = self._values = None

    def append(self, k, v):
        """Store new keys (..., n, d_k) and values (..., n, d_v) after the ones already cached."""
        n = k.shape[-2]
        if self.length + n > self.capacity:
            raise ValueError(f"KVCache is full: {self.length} + {n} > capacity {self.capacity}")
        if self._keys is None:
            xp = namespace(k, v)
            dev = device_of(k)
            self._keys = xp.zeros((*k.shape[:-2], self.capacity, k.shape[-1]), dtype=k.dtype, device=dev)
            self._values = xp.zeros((*v.shape[:-2], self.capacity, v.shape[-1]), dtype=v.dtype, device=dev)
        self._keys[..., self.length : self.length + n, :] = k
        self._values[..., self.length : self.length + n, :] = v
        self.length += n

    @property
    def keys(self):
        return self._keys[..., : self.length, :]

    @property
    def values(self):
        return self._values[..., : self.length, :]


def decode_with_kv_cache(x, W_q, W_k, W_v):
    """Outputs (..., T, d_v) of causal self-attention over x (..., T, d_model), one token at a time.

    Equals ``self_attention(x, W_q, W_k, W_v, causal=True)[0]`` at every step.
    """
    xp = namespace(x, W_q, W_k, W_v)
    T = x.shape[-2]
    cache = KVCache(T)
    outputs = []
    for t in range(T):
        x_t = x[..., t : t + 1, :]  # (..., 1, d_model): the newest token
        cache.append(x_t @ W_k, x_t @ W_v)  # its key and value, projected once and kept
        # One query against every cached key: the cache holds only the past, so no mask is needed.
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, cache.keys, cache.values)
        outputs.append(out_t)  # (..., 1, d_v)
    return xp.concat(outputs, axis=-2)
