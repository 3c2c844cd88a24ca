"""attn_ref: the reference implementation of lecture note 3.1, "From Recurrence to Attention".

Every number a student must produce is computed here and every hidden check compares student code
against these functions. The package knows nothing of notebooks or grading.

Conventions (stated once, tested in tests/reference/test_conventions.py):

* Arrays: every function takes NumPy arrays or torch tensors and returns the same kind, with the
  inputs' dtype and device. Inputs are never written to. ``import attn_ref`` and its NumPy path never
  import torch (the grader scores with NumPy alone); torch is imported only when a tensor arrives or a
  ``device`` is asked for.
* Shapes: (..., T, d). Leading dimensions (batch, heads) broadcast.
* Masks: boolean, ``True`` = this query may attend to this key (PyTorch's convention), broadcastable
  to (..., T_q, T_k).
* Causal masks are aligned bottom-right: with T_q queries and T_k keys, query i sees keys
  0 … i + (T_k − T_q). For T_q = T_k this is "on and below the diagonal"; for T_q = 1 (one decode step
  against a cache) the single query sees every key.
* Sliding window of width w: query i sees keys i − w + 1 … i (w keys, itself included; fewer near the
  start). A window is causal by construction.
* A fully masked row has zero weights and a zero output, never NaN.
* Column vectors for Bahdanau (as in the paper): W_q has shape (d_a, d_q) and acts as W_q q.
  Row vectors for self-attention (as in Vaswani et al.): Q = x @ W_q with W_q of shape (d_model, d_k).
* Mask constructors (``causal_mask``, ``sliding_window_mask``) return NumPy arrays when ``device`` is
  None and torch tensors on that device otherwise.
"""

from .attention import additive_attention, scaled_dot_product_attention, self_attention, softmax
from .chunked import chunked_attention
from .costs import (
    attention_map_bytes,
    attention_path_length,
    attention_scores,
    attention_sequential_steps,
    jacobian_product,
    rnn_jacobian_norm,
    rnn_path_length,
    rnn_sequential_steps,
)
from .decoding import KVCache, decode_with_kv_cache
from .masks import causal_mask, sliding_window_mask
from .recurrence import rnn_gradient_norm

__version__ = "0.8.0"

__all__ = [
    "KVCache",
    "additive_attention",
    "attention_map_bytes",
    "attention_path_length",
    "attention_scores",
    "attention_sequential_steps",
    "causal_mask",
    "chunked_attention",
    "decode_with_kv_cache",
    "jacobian_product",
    "rnn_gradient_norm",
    "rnn_jacobian_norm",
    "rnn_path_length",
    "rnn_sequential_steps",
    "scaled_dot_product_attention",
    "self_attention",
    "sliding_window_mask",
    "softmax",
]
