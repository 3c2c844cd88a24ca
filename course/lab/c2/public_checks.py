"""Public checks of c2: each test_ function is one `grader.check` case. UPPER_CASE names are computed here
with the reference at build time and written into the tests as literals (the worked examples are public)."""

import numpy as np

import attn_ref

_KEYS = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_CONTEXT, _WEIGHTS = attn_ref.additive_attention(np.array([1.0, 0.0]), _KEYS, np.eye(2), np.eye(2), np.ones(2))
EXAMPLE_WEIGHTS = np.round(_WEIGHTS, 6).tolist()
EXAMPLE_CONTEXT = np.round(_CONTEXT, 6).tolist()


def test_c2_shapes_and_weights(additive_attention):
    import numpy as np
    rng = np.random.default_rng(1)
    context, weights = additive_attention(rng.standard_normal(3), rng.standard_normal((6, 5)),
                                          rng.standard_normal((4, 3)), rng.standard_normal((4, 5)),
                                          rng.standard_normal(4))
    assert np.shape(context) == (5,), "context should have shape (d_k,)"
    assert np.shape(weights) == (6,), "weights should have shape (T,)"
    assert np.isclose(np.sum(weights), 1.0), "weights should sum to 1"


def test_c2_worked_example(additive_attention):
    import numpy as np
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    context, weights = additive_attention(np.array([1.0, 0.0]), keys, np.eye(2), np.eye(2), np.ones(2))
    assert np.allclose(weights, EXAMPLE_WEIGHTS, atol=1e-5), "weights should match the worked example (v . tanh(W_q q + W_k h_i))"
    assert np.allclose(context, EXAMPLE_CONTEXT, atol=1e-5), "context should match the worked example"
