"""Public checks for answer variables: types, shapes and ranges, never the answers themselves.

Each returns the source of an otter exception-format test (arguments are looked up in the student's
globals). Hidden checks grade the values.
"""

from __future__ import annotations

PENDING = "hidden checks grade the value after you submit"


def is_count(var: str, minimum: int = 0) -> str:
    return f'''def test_{var}_is_a_whole_number({var}):
    import numbers
    assert {var} is not ..., "assign {var} first"
    assert not isinstance({var}, bool), "{var} should be a number, not True/False"
    assert isinstance({var}, numbers.Integral) or (isinstance({var}, float) and {var}.is_integer()), \\
        "{var} should be a whole number, got " + type({var}).__name__
    assert {var} >= {minimum}, "{var} should be at least {minimum}"
    print("{var}: type and range look right; {PENDING}")
'''


def is_real(var: str, low: float, high: float) -> str:
    return f'''def test_{var}_is_a_number_in_range({var}):
    import numbers
    assert {var} is not ..., "assign {var} first"
    assert isinstance({var}, numbers.Real) and not isinstance({var}, bool), "{var} should be a number"
    assert {low!r} <= {var} <= {high!r}, "{var} should lie between {low} and {high}"
    print("{var}: type and range look right; {PENDING}")
'''


def is_bool(var: str) -> str:
    return f'''def test_{var}_is_true_or_false({var}):
    assert {var} is not ..., "assign {var} first"
    assert type({var}).__name__ in ("bool", "bool_"), "{var} should be True or False, not " + repr({var})
    print("{var}: a boolean; {PENDING}")
'''


def is_choice(var: str, letters: str) -> str:
    return f'''def test_{var}_is_one_letter({var}):
    assert isinstance({var}, str), "{var} should be a string holding one letter"
    assert {var}.strip().upper() in {tuple(letters)!r}, "{var} should be one of {", ".join(letters)}"
    print("{var}: a valid letter; {PENDING}")
'''
