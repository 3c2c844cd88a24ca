"""Public checks of c3: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import numpy as np

import attn_ref

_Q = np.array([[1.0, 0.0], [0.0, 1.0]])
_K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
EXAMPLE_WEIGHTS = np.round(attn_ref.scaled_dot_product_attention(_Q, _K, np.eye(3))[1], 6).tolist()


def test_c3_shapes_and_rows(scaled_dot_product_attention):
    import torch
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 4, generator=g), torch.randn(2, 3, 7, 4, generator=g), torch.randn(2, 3, 7, 6, generator=g)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 3, 5, 6), "out should be (..., T_q, d_v)"
    assert weights.shape == (2, 3, 5, 7), "weights should be (..., T_q, T_k)"
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 5)), "each row of weights should sum to 1"


def test_c3_mask_zeroes_weights(scaled_dot_product_attention):
    import torch
    q = k = v = torch.randn(4, 3, generator=torch.Generator().manual_seed(1))
    mask = torch.tensor([[True, False, True, True]] * 4)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert (weights[:, 1] == 0).all(), "masked positions (False) should get weight exactly 0"
    assert torch.allclose(weights.sum(-1), torch.ones(4)), "rows should still sum to 1"


def test_c3_worked_example_and_empty_rows(scaled_dot_product_attention):
    import torch
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out, weights = scaled_dot_product_attention(q, k, torch.eye(3))
    assert torch.allclose(weights, torch.tensor(EXAMPLE_WEIGHTS), atol=1e-5), \
        "weights should match the worked example (scale by 1/sqrt(d_k), d_k = q.shape[-1])"
    mask = torch.tensor([[True, True, False], [False, False, False]])
    out, weights = scaled_dot_product_attention(q, k, torch.eye(3), mask=mask)
    assert not torch.isnan(out).any() and (weights[1] == 0).all() and (out[1] == 0).all(), \
        "a fully masked row should give zero weights and a zero output, not NaN"
