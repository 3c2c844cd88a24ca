"""Public checks of c1: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import numpy as np

import attn_ref

EXAMPLE = np.round(attn_ref.softmax(np.array([1.0, 2.0, 3.0])), 6).tolist()


def test_c1_rows_sum_to_one(softmax):
    import numpy as np
    x = np.random.default_rng(0).standard_normal((3, 5))
    y = softmax(x)
    assert y.shape == x.shape, "softmax should keep the input's shape"
    assert np.allclose(y.sum(axis=-1), 1.0), "each row should sum to 1"
    assert (y >= 0).all(), "weights are never negative"


def test_c1_stable_for_big_logits(softmax):
    import numpy as np
    y = softmax(np.array([[1e4, 0.0, -1e4]]))
    assert np.isfinite(y).all(), "logits of 1e4 gave NaN or inf: subtract the maximum first"


def test_c1_worked_example_and_input(softmax):
    import numpy as np
    x = np.array([1.0, 2.0, 3.0])
    before = x.copy()
    y = softmax(x)
    assert np.array_equal(x, before), "softmax wrote into its input: compute into new arrays"
    assert np.allclose(y, EXAMPLE, atol=1e-5), "softmax([1, 2, 3]) should give the worked example's numbers"
    z = np.random.default_rng(2).standard_normal((2, 3, 4))
    assert np.allclose(softmax(z, axis=0).sum(axis=0), 1.0), "softmax(x, axis=0) should sum to 1 along axis 0"
