"""Softmax, Bahdanau's additive attention and scaled dot-product attention.

Conventions (masks, alignment, fully masked rows) are stated once in the package docstring.
"""

from __future__ import annotations

from ._arrays import inv_sqrt, is_torch_array, mask_like, namespace
from .masks import causal_mask, window_mask

NEG_INF = float("-inf")


def softmax(x, axis: int = -1, mask=None):
    """exp(x) / sum(exp(x)) along ``axis``, stable for logits of ±1e4.

    mask: bool, True = keep; masked entries get weight exactly 0, a fully masked row is all zeros.
    """
    xp = namespace(x, mask)
    if mask is not None:
        x = xp.where(mask_like(mask, x), x, NEG_INF)
    row_max = xp.max(x, axis=axis, keepdims=True)
    row_max = xp.where(xp.isfinite(row_max), row_max, 0.0)  # a fully masked row has max −inf
    e = xp.exp(x - row_max)  # every exponent <= 0: no overflow
    total = xp.sum(e, axis=axis, keepdims=True)
    return e / xp.where(total > 0, total, 1.0)


def additive_attention(query, keys, W_q, W_k, v, values=None, mask=None):
    """Bahdanau et al. (2015): e_i = vᵀ tanh(W_q q + W_k h_i), α = softmax(e), context = Σ α_i values_i.

    query (..., d_q) is the decoder state; keys (..., T, d_k) are the encoder states h_i;
    W_q (d_a, d_q), W_k (d_a, d_k) act on column vectors; v (d_a,); values (..., T, d_v) default to keys.
    mask (..., T) bool, True = may attend. Returns (context (..., d_v), weights (..., T)).
    """
    xp = namespace(query, keys, W_q, W_k, v, values)
    values = keys if values is None else values
    query_part = query @ xp.matrix_transpose(W_q)  # (..., d_a): W_q q as a row
    key_part = keys @ xp.matrix_transpose(W_k)  # (..., T, d_a): W_k h_i for every i
    energy = xp.tanh(query_part[..., None, :] + key_part)  # (..., T, d_a)
    scores = energy @ v  # (..., T)
    weights = softmax(scores, axis=-1, mask=mask)  # (..., T)
    context = (weights[..., None, :] @ values)[..., 0, :]  # (..., d_v)
    return context, weights


def combined_mask(mask, causal: bool, window, Tq: int, Tk: int, like):
    """The explicit mask AND the causal or sliding-window pattern, on ``like``'s kind and device."""
    device = like.device if is_torch_array(like) else None
    if window is not None:
        pattern = window_mask(Tq, Tk, window, device)
    elif causal:
        pattern = causal_mask(Tq, Tk, device)
    else:
        pattern = None
    if mask is None:
        return pattern
    mask = mask_like(mask, like)
    return mask if pattern is None else mask & pattern


def scaled_dot_product_attention(q, k, v, mask=None, causal=False, window=None, scale=None):
    """softmax(q kᵀ · scale) v, with scale = 1/√d_k by default (Vaswani et al., 2017).

    q (..., Tq, d_k), k (..., Tk, d_k), v (..., Tk, d_v); mask bool, broadcastable to (..., Tq, Tk).
    causal: bottom-right causal mask; window=w: sliding window of w keys (causal by construction).
    Returns (out (..., Tq, d_v), weights (..., Tq, Tk)).
    """
    xp = namespace(q, k, v)
    Tq, Tk = q.shape[-2], k.shape[-2]
    scale = inv_sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = (q @ xp.matrix_transpose(k)) * scale  # (..., Tq, Tk)
    allowed = combined_mask(mask, causal, window, Tq, Tk, q)
    weights = softmax(scores, axis=-1, mask=allowed)  # (..., Tq, Tk)
    return weights @ v, weights  # (..., Tq, d_v)


def self_attention(x, W_q, W_k, W_v, causal=True, mask=None):
    """One head of self-attention: every token of x (..., T, d_model) is query, key and value.

    Q = x @ W_q with W_q (d_model, d_k) (row vectors, as in Vaswani et al.); likewise K, V.
    Returns (out (..., T, d_v), weights (..., T, T)).
    """
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    return scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
