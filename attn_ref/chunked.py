"""Attention one tile at a time with an online softmax: the idea behind FlashAttention.

Never materialises the (Tq, Tk) map: only a (chunk, chunk) tile of scores lives at once, with a running
row maximum m, a running normaliser l and a running weighted sum acc per query (Milakov & Gimelshein,
2018; Dao et al., 2022). The result equals full attention; only the memory bill changes (note 3.1, §3:
"FlashAttention changes the implementation, not the fact that every pair can interact").
"""

from __future__ import annotations

from ._arrays import inv_sqrt, is_torch_array, namespace
from .masks import causal_block

NEG_INF = float("-inf")


def chunked_attention(q, k, v, chunk_size: int = 128, causal: bool = False, scale=None):
    """Same as ``scaled_dot_product_attention(q, k, v, causal=causal)[0]``, in (chunk, chunk) tiles.

    q (..., Tq, d_k), k (..., Tk, d_k), v (..., Tk, d_v) -> (..., Tq, d_v). Causal is bottom-right aligned.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    xp = namespace(q, k, v)
    Tq, Tk = q.shape[-2], k.shape[-2]
    scale = inv_sqrt(q.shape[-1]) if scale is None else float(scale)
    device = q.device if is_torch_array(q) else None
    out_tiles = []
    for q0 in range(0, Tq, chunk_size):
        q_tile = q[..., q0 : q0 + chunk_size, :]  # (..., n, d_k)
        n = q_tile.shape[-2]
        newest_key = q0 + n - 1 + (Tk - Tq)  # the last key any query of this tile may see
        m = l = acc = None
        for k0 in range(0, Tk, chunk_size):
            if causal and k0 > 0 and k0 > newest_key:
                break  # every later key is in this tile's future
            k_tile, v_tile = k[..., k0 : k0 + chunk_size, :], v[..., k0 : k0 + chunk_size, :]
            s = (q_tile @ xp.matrix_transpose(k_tile)) * scale  # (..., n, c)
            if causal:
                s = xp.where(causal_block(q0, n, k0, k_tile.shape[-2], Tk - Tq, device), s, NEG_INF)
            tile_max = xp.max(s, axis=-1, keepdims=True)
            m_new = tile_max if m is None else xp.maximum(m, tile_max)
            m_safe = xp.where(xp.isfinite(m_new), m_new, 0.0)  # rows with no visible key yet
            p = xp.exp(s - m_safe)  # (..., n, c), unnormalised weights
            if m is None:
                l, acc = xp.sum(p, axis=-1, keepdims=True), p @ v_tile
            else:
                rescale = xp.exp(m - m_safe)  # earlier sums were taken against an older maximum
                l = l * rescale + xp.sum(p, axis=-1, keepdims=True)
                acc = acc * rescale + p @ v_tile
            m = m_new
        out_tiles.append(acc / xp.where(l > 0, l, 1.0))  # fully masked rows: 0 / 1 = 0
    return xp.concat(out_tiles, axis=-2)
