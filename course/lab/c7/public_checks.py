"""Public checks of c7: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import attn_ref

EXAMPLE = attn_ref.sliding_window_mask(5, 2).astype(int).tolist()


def test_c7_counts(sliding_window_mask):
    import torch
    m = sliding_window_mask(8, 3)
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, "return a bool tensor"
    assert m.shape == (8, 8), "shape should be (T, T)"
    assert m.sum().item() == 8 * 3 - 3, "T*w - w(w-1)/2 allowed pairs"
    assert m.diagonal().all(), "every token may attend to itself"


def test_c7_worked_example(sliding_window_mask):
    assert sliding_window_mask(5, 2).int().tolist() == EXAMPLE, \
        "sliding_window_mask(5, 2) should match the worked example"
