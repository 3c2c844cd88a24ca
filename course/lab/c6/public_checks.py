"""Public checks of c6: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import numpy as np

import attn_ref

_X = np.arange(6.0).reshape(3, 2) / 6
EXAMPLE = np.round(attn_ref.decode_with_kv_cache(_X, np.eye(2), np.eye(2), np.eye(2)), 6).tolist()


def test_c6_shape(decode_with_kv_cache):
    import torch
    g = torch.Generator().manual_seed(3)
    x, W = torch.randn(2, 4, 6, generator=g), torch.randn(6, 5, generator=g)
    out = decode_with_kv_cache(x, W, W, W)
    assert tuple(out.shape) == (2, 4, 5), "outputs should be (..., T, d_v)"
    assert torch.allclose(out[:, 0], x[:, 0] @ W, atol=1e-5), "the first token attends only to itself"


def test_c6_worked_example_and_projections(decode_with_kv_cache):
    import torch
    x = torch.arange(6.0).reshape(3, 2) / 6
    out = decode_with_kv_cache(x, torch.eye(2), torch.eye(2), torch.eye(2))
    assert torch.allclose(out, torch.tensor(EXAMPLE), atol=1e-5), "outputs should match the worked example"
    g = torch.Generator().manual_seed(4)
    x, W_q, W_k, W_v = torch.randn(2, 6, 4, generator=g), torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)
    rows = []

    class CountKeyProjections(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            if any(t is W_k for t in tensors):
                rows.extend(t.numel() // 4 for t in tensors if t is not W_k)
            return func(*args, **(kwargs or {}))

    with CountKeyProjections():
        decode_with_kv_cache(x, W_q, W_k, W_v)
    assert sum(rows) <= 12, f"{sum(rows)} rows went through W_k for 12 tokens: project each token once, then keep its key"
