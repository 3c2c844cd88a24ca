"""Public checks of TEMPLATE_UNIT: each test_ function is one `grader.check("TEMPLATE_UNIT")` case, run alone
(import inside it). Its parameter is the student's function, by name. UPPER_CASE names are computed here at
build time and written into the tests as literals."""

import numpy as np
import TEMPLATE_UNIT_ref

EXAMPLE = TEMPLATE_UNIT_ref.TEMPLATE_FUNCTION(np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]])).tolist()


def test_TEMPLATE_UNIT_worked_example(TEMPLATE_FUNCTION):
    import numpy as np

    out = TEMPLATE_FUNCTION(np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]]))
    assert np.shape(out) == (2, 3), "TEMPLATE_FUNCTION should keep the input's shape"
    assert np.allclose(out, EXAMPLE), "TEMPLATE_FUNCTION should give the worked example's values"
