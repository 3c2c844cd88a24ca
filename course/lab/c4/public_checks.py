"""Public checks of c4: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import attn_ref

EXAMPLE = attn_ref.causal_mask(4).astype(int).tolist()


def test_c4_shape_and_dtype(causal_mask):
    import torch
    m = causal_mask(6)
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, "return a bool tensor"
    assert m.shape == (6, 6), "shape should be (T, T)"
    assert m.sum().item() == 21, "a causal mask of T = 6 allows T(T+1)/2 = 21 pairs"


def test_c4_worked_example(causal_mask):
    import torch
    assert causal_mask(4).int().tolist() == EXAMPLE, \
        "causal_mask(4) should be True on and below the diagonal (query i sees keys 0..i)"
