"""Public checks of c5: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import numpy as np

import attn_ref

_X = np.arange(6.0).reshape(3, 2) / 6
EXAMPLE_WEIGHTS = np.round(attn_ref.self_attention(_X, np.eye(2), np.eye(2), np.eye(2))[1], 6).tolist()
# Weights that are not the identity (W_q and W_k differ, so swapping them shows) and causal=False
_X2 = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
_W_Q, _W_K, _W_V = np.array([[1.0, 0.5], [0.0, 1.0]]), np.array([[1.0, 0.0], [-0.5, 2.0]]), np.array([[1.0, 0.0], [1.0, 1.0]])
GENERAL_OUT, GENERAL_WEIGHTS = (np.round(a, 6).tolist() for a in attn_ref.self_attention(_X2, _W_Q, _W_K, _W_V, causal=False))


def test_c5_causal_first_token(self_attention):
    import torch
    g = torch.Generator().manual_seed(2)
    x, W_q, W_k, W_v = torch.randn(2, 5, 6, generator=g), torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g), torch.randn(6, 3, generator=g)
    out, weights = self_attention(x, W_q, W_k, W_v, causal=True)
    assert out.shape == (2, 5, 3) and weights.shape == (2, 5, 5), "shapes (..., T, d_v) and (..., T, T)"
    assert torch.allclose(out[:, 0], x[:, 0] @ W_v, atol=1e-5), "the first token can only attend to itself"
    assert (weights.triu(1) == 0).all(), "no weight on future tokens when causal=True"


def test_c5_worked_example(self_attention):
    import torch
    x = torch.arange(6.0).reshape(3, 2) / 6
    out, weights = self_attention(x, torch.eye(2), torch.eye(2), torch.eye(2))
    assert torch.allclose(weights, torch.tensor(EXAMPLE_WEIGHTS), atol=1e-5), "weights should match the worked example"


def test_c5_not_causal_with_general_weights(self_attention):
    import torch
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
    W_q, W_k, W_v = torch.tensor([[1.0, 0.5], [0.0, 1.0]]), torch.tensor([[1.0, 0.0], [-0.5, 2.0]]), torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    out, weights = self_attention(x, W_q, W_k, W_v, causal=False)
    assert (weights.triu(1) > 0).any(), "causal=False: every token attends to every token, future ones too"
    assert torch.allclose(weights, torch.tensor(GENERAL_WEIGHTS), atol=1e-5), \
        "weights for these W_q, W_k, causal=False do not match (queries from x @ W_q, keys from x @ W_k?)"
    assert torch.allclose(out, torch.tensor(GENERAL_OUT), atol=1e-5), "out should be weights @ (x @ W_v)"
