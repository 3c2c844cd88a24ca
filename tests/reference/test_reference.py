"""attn_ref against torch's own SDPA (float64, where conventions agree) and a naive loop (where not)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from loop_reference import loop_additive, loop_attention, loop_causal, loop_window

import attn_ref

rng = np.random.default_rng(0)


def randn(*shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("shape_q,shape_kv,d_v", [((2, 3, 5, 4), (2, 3, 7, 4), 6), ((1, 257, 8), (1, 257, 8), 8)])
def test_matches_torch_sdpa_unmasked(shape_q, shape_kv, d_v):
    q, k = torch.tensor(randn(*shape_q)), torch.tensor(randn(*shape_kv))
    v = torch.tensor(randn(*shape_kv[:-1], d_v))
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), rtol=1e-12, atol=1e-12)
    assert out.dtype == torch.float64 and weights.shape == (*shape_q[:-1], shape_kv[-2])


def test_matches_torch_sdpa_square_causal_and_bool_mask():
    q, k, v = (torch.tensor(randn(2, 3, 6, 4)) for _ in range(3))
    out, _ = attn_ref.scaled_dot_product_attention(q, k, v, causal=True)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    mask = torch.tensor(rng.random((6, 6)) > 0.3) | torch.eye(6, dtype=torch.bool)
    out, _ = attn_ref.scaled_dot_product_attention(q, k, v, mask=mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_custom_scale_matches_torch():
    q, k, v = (torch.tensor(randn(3, 5, 4)) for _ in range(3))
    out, _ = attn_ref.scaled_dot_product_attention(q, k, v, scale=0.3)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=0.3))


@pytest.mark.parametrize("Tq,Tk", [(3, 7), (1, 5), (5, 5), (7, 3)])
def test_bottom_right_causal_matches_loop(Tq, Tk):
    q, k, v = randn(Tq, 4), randn(Tk, 4), randn(Tk, 3)
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v, causal=True)
    ref_out, ref_w = loop_attention(q, k, v, loop_causal(Tq, Tk))
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("T,w", [(9, 1), (9, 3), (9, 9), (5, 12)])
def test_sliding_window_matches_loop(T, w):
    q, k, v = randn(T, 4), randn(T, 4), randn(T, 2)
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v, window=w)
    ref_out, ref_w = loop_attention(q, k, v, loop_window(T, w))
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(weights > 0, np.array(loop_window(T, w)))


def test_fully_masked_rows_give_zeros_not_nan():
    q, k, v = randn(4, 3), randn(5, 3), randn(5, 2)
    mask = rng.random((4, 5)) > 0.5
    mask[1] = False
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v, mask=mask)
    ref_out, ref_w = loop_attention(q, k, v, mask)
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_array_equal(weights[1], 0.0)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    # and in torch, where a hand-written masked_fill(-inf) + softmax gives NaN
    t_out, _ = attn_ref.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)), mask=torch.tensor(mask))
    assert not torch.isnan(t_out).any()
    torch.testing.assert_close(t_out, torch.tensor(ref_out))


def test_additive_attention_matches_loop_and_torch():
    d_q, d_k, d_a, T = 3, 5, 4, 6
    query, keys = randn(d_q), randn(T, d_k)
    W_q, W_k, v = randn(d_a, d_q), randn(d_a, d_k), randn(d_a)
    context, weights = attn_ref.additive_attention(query, keys, W_q, W_k, v)
    ref_c, ref_w = loop_additive(query, keys, W_q, W_k, v)
    np.testing.assert_allclose(context, ref_c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-12, atol=1e-12)
    t_context, _ = attn_ref.additive_attention(*(torch.tensor(a) for a in (query, keys, W_q, W_k, v)))
    torch.testing.assert_close(t_context, torch.tensor(ref_c))


def test_additive_attention_values_and_mask():
    query, keys, values = randn(2, 3), randn(2, 4, 5), randn(2, 4, 7)
    W_q, W_k, v = randn(6, 3), randn(6, 5), randn(6)
    mask = np.array([True, False, True, True])
    context, weights = attn_ref.additive_attention(query, keys, W_q, W_k, v, values=values, mask=mask)
    assert context.shape == (2, 7) and weights.shape == (2, 4)
    np.testing.assert_array_equal(weights[:, 1], 0.0)
    np.testing.assert_allclose(context, np.einsum("bt,btd->bd", weights, values))


def test_softmax_stable_and_any_axis():
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    for axis in (0, 1, -1):
        y = attn_ref.softmax(x, axis=axis)
        assert np.isfinite(y).all()
        np.testing.assert_allclose(y.sum(axis=axis), 1.0)
    np.testing.assert_allclose(attn_ref.softmax(x)[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(attn_ref.softmax(x)[1], [1 / 3] * 3)
    t = torch.tensor(x, dtype=torch.float32)
    torch.testing.assert_close(attn_ref.softmax(t, axis=0), torch.softmax(t, dim=0))


def test_self_attention_projects_rows():
    x, W_q, W_k, W_v = randn(2, 5, 6), randn(6, 4), randn(6, 4), randn(6, 3)
    out, weights = attn_ref.self_attention(x, W_q, W_k, W_v, causal=True)
    ref = np.stack([loop_attention(x[b] @ W_q, x[b] @ W_k, x[b] @ W_v, loop_causal(5, 5))[0] for b in range(2)])
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    assert out.shape == (2, 5, 3) and weights.shape == (2, 5, 5)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_kv_cache_decode_equals_full_causal_at_every_step(kind):
    x, W_q, W_k, W_v = randn(2, 9, 6), randn(6, 4), randn(6, 4), randn(6, 5)
    if kind == "torch":
        x, W_q, W_k, W_v = (torch.tensor(a) for a in (x, W_q, W_k, W_v))
    decoded = attn_ref.decode_with_kv_cache(x, W_q, W_k, W_v)
    for t in range(1, 10):  # the prefix of length t, decoded alone, equals full attention over it
        full = attn_ref.self_attention(x[:, :t], W_q, W_k, W_v, causal=True)[0]
        np.testing.assert_allclose(np.asarray(decoded[:, :t]), np.asarray(full), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(attn_ref.decode_with_kv_cache(x[:, :t], W_q, W_k, W_v)), np.asarray(full), rtol=1e-12, atol=1e-12)


def test_kv_cache_rejects_overflow():
    cache = attn_ref.KVCache(2)
    cache.append(np.zeros((1, 3)), np.zeros((1, 2)))
    cache.append(np.ones((1, 3)), np.ones((1, 2)))
    assert cache.keys.shape == (2, 3) and cache.values[1, 0] == 1.0
    with pytest.raises(ValueError, match="full"):
        cache.append(np.zeros((1, 3)), np.zeros((1, 2)))


@pytest.mark.parametrize("chunk_size", [1, 3, 4, 16, 64])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("Tq,Tk", [(13, 13), (5, 11), (11, 5)])
def test_chunked_equals_full(chunk_size, causal, Tq, Tk):
    q, k, v = randn(2, Tq, 4), randn(2, Tk, 4), randn(2, Tk, 3)
    full, _ = attn_ref.scaled_dot_product_attention(q, k, v, causal=causal)
    chunked = attn_ref.chunked_attention(q, k, v, chunk_size=chunk_size, causal=causal)
    np.testing.assert_allclose(chunked, full, rtol=1e-12, atol=1e-12)


def test_chunked_torch_float32():
    q, k, v = (torch.tensor(randn(2, 33, 8), dtype=torch.float32) for _ in range(3))
    out = attn_ref.chunked_attention(q, k, v, chunk_size=8, causal=True)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("T,factor", [(1, 0.9), (2, 0.9), (40, 0.9), (50, 0.9), (30, 1.1), (10, 0.5)])
def test_rnn_gradient_norm_is_the_jacobian_product(T, factor):
    assert attn_ref.rnn_gradient_norm(T, factor) == pytest.approx(attn_ref.jacobian_product(factor, T - 1), rel=1e-12)
    assert attn_ref.rnn_jacobian_norm(T, factor) == pytest.approx(attn_ref.rnn_gradient_norm(T, factor), rel=1e-12)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_lengths_are_named(bad):
    with pytest.raises(ValueError, match="positive integer"):
        attn_ref.causal_mask(bad)
    with pytest.raises(ValueError, match="positive integer"):
        attn_ref.attention_scores(bad)
    with pytest.raises(ValueError, match="positive integer"):
        attn_ref.rnn_gradient_norm(bad, 0.9)


def test_non_boolean_mask_is_rejected():
    with pytest.raises(TypeError, match="boolean"):
        attn_ref.softmax(np.zeros((2, 2)), mask=np.ones((2, 2)))


def test_mixing_numpy_and_torch_is_rejected():
    with pytest.raises(TypeError, match="mix"):
        attn_ref.scaled_dot_product_attention(np.zeros((2, 2)), torch.zeros(2, 2), np.zeros((2, 2)))
