"""Property tests over shapes: what must hold for every (B, H, Tq, Tk, d, d_v)."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attn_ref

dims = st.integers(1, 6)
settings.register_profile("ci", max_examples=40, deadline=None)
settings.load_profile("ci")


@st.composite
def problems(draw):
    B, H, Tq, Tk, d, d_v = (draw(dims) for _ in range(6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, H, Tq, d))
    k = rng.standard_normal((B, H, Tk, d))
    v = rng.standard_normal((B, H, Tk, d_v))
    mask = rng.random((Tq, Tk)) > 0.4
    return q, k, v, mask, rng


def read_only(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


@given(problems(), st.booleans())
def test_rows_sum_to_one_and_masked_weights_are_zero(problem, causal):
    q, k, v, mask, _ = problem
    q, k, v, mask = read_only(q, k, v, mask)  # writing to an input raises
    copies = [a.copy() for a in (q, k, v, mask)]
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    allowed = mask & attn_ref.causal_mask(*mask.shape) if causal else mask
    assert out.shape == (*q.shape[:-1], v.shape[-1])
    assert np.all(weights[..., ~allowed] == 0.0)
    row_sums = weights.sum(-1)
    has_key = allowed.any(-1)
    np.testing.assert_allclose(row_sums[..., has_key], 1.0, rtol=1e-12)
    np.testing.assert_array_equal(out[..., ~has_key, :], 0.0)
    for a, c in zip((q, k, v, mask), copies):
        np.testing.assert_array_equal(a, c)


@given(problems())
def test_ones_values_give_ones(problem):
    q, k, _, _, _ = problem
    v = np.ones((*k.shape[:-1], 3))
    out, _ = attn_ref.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out, 1.0, rtol=1e-12)


@given(problems())
def test_permuting_keys_with_values_changes_nothing(problem):
    q, k, v, _, rng = problem
    perm = rng.permutation(k.shape[-2])
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v)
    out_p, weights_p = attn_ref.scaled_dot_product_attention(q, k[..., perm, :], v[..., perm, :])
    np.testing.assert_allclose(out_p, out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights_p, weights[..., perm], rtol=1e-10, atol=1e-12)


@given(problems(), st.data())
def test_future_values_do_not_move_earlier_causal_outputs(problem, data):
    q, k, v, _, rng = problem
    T = min(q.shape[-2], k.shape[-2])
    q, k, v = q[..., :T, :], k[..., :T, :], v[..., :T, :]
    t = data.draw(st.integers(0, T - 1))
    out, _ = attn_ref.scaled_dot_product_attention(q, k, v, causal=True)
    v2, k2 = v.copy(), k.copy()
    v2[..., t + 1 :, :] += rng.standard_normal(v2[..., t + 1 :, :].shape)
    k2[..., t + 1 :, :] += rng.standard_normal(k2[..., t + 1 :, :].shape)
    out2, _ = attn_ref.scaled_dot_product_attention(q, k2, v2, causal=True)
    np.testing.assert_array_equal(out2[..., : t + 1, :], out[..., : t + 1, :])
    np.testing.assert_array_equal(out[..., 0, :], v[..., 0, :])


@given(problems(), st.integers(1, 5))
def test_chunked_and_window_agree_with_masks(problem, chunk):
    q, k, v, _, _ = problem
    full, _ = attn_ref.scaled_dot_product_attention(q, k, v, causal=True)
    np.testing.assert_allclose(attn_ref.chunked_attention(q, k, v, chunk_size=chunk, causal=True), full, atol=1e-12)
    T = q.shape[-2]
    qs = q[..., :T, :]
    ks, vs = (np.concatenate([a] * (T // a.shape[-2] + 1), axis=-2)[..., :T, :] for a in (k, v))
    by_flag, _ = attn_ref.scaled_dot_product_attention(qs, ks, vs, window=chunk)
    by_mask, _ = attn_ref.scaled_dot_product_attention(qs, ks, vs, mask=attn_ref.sliding_window_mask(T, chunk))
    np.testing.assert_array_equal(by_flag, by_mask)


@given(problems())
def test_float32_in_float32_out_torch_and_numpy(problem):
    q, k, v, mask, _ = problem
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    out, weights = attn_ref.scaled_dot_product_attention(q32, k32, v32, mask=mask)
    assert out.dtype == np.float32 and weights.dtype == np.float32
    t_out, _ = attn_ref.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q32, k32, v32)), mask=torch.from_numpy(mask))
    assert t_out.dtype == torch.float32
    np.testing.assert_allclose(t_out.numpy(), out, rtol=1e-5, atol=1e-5)
    ref, _ = attn_ref.scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


@given(st.integers(1, 6), st.integers(1, 40), st.floats(-1e4, 1e4))
def test_softmax_large_logits(rows, cols, shift):
    x = np.random.default_rng(rows * cols).standard_normal((rows, cols)) * 10 + shift
    x[0, 0] = 1e4
    y = attn_ref.softmax(x.astype(np.float32))
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-5)
