"""The one set of type rules: how an answer's value is read, the same in `grader.check` and hidden grading.

Two halves. ``describe`` runs where the value lives (the student's kernel) and turns it into plain data:
a bool is never an int, NumPy and torch scalars and 0-d arrays become their value, Fraction and Decimal
stay exact, anything else is named, not passed. ``read`` runs on the data and decides the form: the
hidden side calls it on the kernel's reply, the public checks (which inline this file at build time,
since students have no attn_ref) call it on the description they make themselves, so the two can never
disagree on form. Values are compared elsewhere.

Standard library only, and no module-level state besides constants: the release builder inlines this
source into each public check, and the grader sends it into the kernel.
"""

import math
import numbers
from decimal import Decimal, InvalidOperation
from fractions import Fraction

MAX_TEXT = 300
MAX_DIGITS = 400  # an exact number longer than this is not an answer to anything here
MAX_ITEMS = 50
KINDS = ("int", "float", "bool", "choice", "int_dict", "scalar")


def _type_name(value):
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    return (module.split(".")[0] + "." if module not in ("builtins", "") else "") + kind.__name__


def _is_bool(value):
    return isinstance(value, bool) or _type_name(value) in ("numpy.bool_", "numpy.bool")


def _zero_dim(value):
    """A NumPy or torch scalar, 0-d array or 0-d tensor: its Python value, else None."""
    shape = getattr(value, "shape", None)
    item = getattr(value, "item", None)
    if callable(item) and shape is not None and tuple(shape) == () and not isinstance(value, (str, bytes)):
        try:
            if hasattr(value, "detach"):  # a torch tensor, maybe on a GPU
                value = value.detach().cpu()
            return value.item()
        except Exception:  # noqa: BLE001 - a value that cannot be read is "other"
            return None
    return None


def _too_long(number):
    return abs(number).bit_length() > MAX_DIGITS * 3.33  # never str() an int of unbounded length


def _int_description(number):
    if _too_long(number):
        return {"t": "other", "v": "a whole number with more than %d digits" % MAX_DIGITS}
    return {"t": "int", "v": int(number)}


def describe(value, depth=0):
    """Plain data for ``value``: {"t": kind, "v": ...}, types kept apart, nothing of the object kept."""
    if value is Ellipsis:
        return {"t": "ellipsis"}
    if _is_bool(value):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, Fraction):
        if _too_long(value.numerator) or _too_long(value.denominator):
            return {"t": "other", "v": "a fraction with more than %d digits" % MAX_DIGITS}
        return {"t": "fraction", "n": int(value.numerator), "d": int(value.denominator)}
    if isinstance(value, Decimal):
        return {"t": "decimal", "v": str(value)[:MAX_TEXT]}
    if isinstance(value, numbers.Integral):
        try:
            return _int_description(int(value))
        except Exception:  # noqa: BLE001
            return {"t": "other", "v": _type_name(value)[:80]}
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except Exception:  # noqa: BLE001
            return {"t": "other", "v": _type_name(value)[:80]}
        return {"t": "float", "v": number if math.isfinite(number) else repr(number)}
    if isinstance(value, str):
        return {"t": "str", "v": value[:MAX_TEXT]}
    if isinstance(value, dict) and depth == 0:
        return {"t": "dict", "v": [[describe(k, 1), describe(v, 1)] for k, v in list(value.items())[:MAX_ITEMS]],
                "n": len(value)}
    inner = _zero_dim(value)
    if inner is not None and not isinstance(inner, (list, tuple, dict)):
        return describe(inner, depth)
    shape = getattr(value, "shape", None)
    if shape is not None:
        try:
            return {"t": "other", "v": "%s of shape %s" % (_type_name(value)[:60], tuple(int(n) for n in shape)[:8])}
        except Exception:  # noqa: BLE001
            pass
    return {"t": "other", "v": _type_name(value)[:80]}


def _what(desc):
    """How a description reads in a message."""
    kind = desc.get("t")
    if kind == "missing":
        return "nothing (the variable is not assigned)"
    if kind == "ellipsis":
        return "... (not answered yet: replace the ... with your answer)"
    if kind == "str":
        return "the text %r" % desc.get("v", "")[:40]
    if kind in ("int", "float", "bool", "fraction", "decimal"):
        return {"int": "a whole number", "float": "a decimal number", "bool": "True/False",
                "fraction": "a Fraction", "decimal": "a Decimal"}[kind]
    if kind == "dict":
        return "a dict"
    return "%s" % (desc.get("v") or "something else")


def _number(desc):
    """An exact number (int or Fraction) or a float from a numeric description; None if not a number."""
    kind = desc.get("t")
    if kind == "int" and isinstance(desc.get("v"), int) and not isinstance(desc.get("v"), bool):
        return desc["v"]
    if kind == "float":
        v = desc.get("v")
        if isinstance(v, str):
            return float(v) if v in ("nan", "inf", "-inf") else None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if kind == "fraction":
        n, d = desc.get("n"), desc.get("d")
        if isinstance(n, int) and isinstance(d, int) and d > 0:
            return Fraction(n, d) if d != 1 else n
        return None
    if kind == "decimal":
        try:
            number = Decimal(str(desc.get("v")))
        except (InvalidOperation, ValueError):
            return None
        if not number.is_finite():
            return float(number)
        if abs(number.adjusted()) > MAX_DIGITS:
            return float(number)
        exact = Fraction(number)
        return exact.numerator if exact.denominator == 1 else exact
    return None


def _whole(number):
    """``number`` as an int when it is a finite whole number, else None (bools never get here)."""
    if isinstance(number, int):
        return number
    if isinstance(number, Fraction):
        return number.numerator if number.denominator == 1 else None
    if isinstance(number, float) and math.isfinite(number) and number.is_integer():
        return int(number)
    return None


def _read_bool(desc, letters):
    if desc.get("t") == "bool" and isinstance(desc.get("v"), bool):
        return desc["v"], None
    return None, "expected True or False, got " + _what(desc) + (" (0 and 1 are numbers, not booleans)"
                                                                  if desc.get("t") == "int" else "")


def _read_choice(desc, letters):
    if desc.get("t") != "str" or not isinstance(desc.get("v"), str):
        return None, "expected one letter as a string, like \"B\"; got " + _what(desc)
    letter = desc["v"].strip().upper()
    if len(letter) != 1 or (letters and letter not in letters):
        choices = ", ".join(letters) if letters else "one letter"
        return None, "a format problem: give exactly one letter (%s) as a string, like \"B\"; got %r" % (
            choices, desc["v"][:20])
    return letter, None


def _dict_key(key_desc):
    """A dict key as a whole number (an int, a whole float, or a string of digits), else None."""
    if not isinstance(key_desc, dict) or key_desc.get("t") == "bool":
        return None
    if key_desc.get("t") == "str" and str(key_desc.get("v", "")).strip().isdigit():
        return int(str(key_desc["v"]).strip())
    return _whole(_number(key_desc))


def _read_int_dict(desc, letters):
    if desc.get("t") != "dict" or not isinstance(desc.get("v"), list):
        return None, "expected a dict, got " + _what(desc)
    found = {}
    for pair in desc["v"]:
        if not (isinstance(pair, list) and len(pair) == 2):
            return None, "could not be read"
        key_desc, value_desc = pair
        key = _dict_key(key_desc)
        if key is None:
            return None, "its keys should be whole numbers; got " + _what(key_desc if isinstance(key_desc, dict) else {})
        value, problem = read("int", value_desc)
        if problem:
            return None, "the value for %d: %s" % (key, problem)
        found[key] = value
    if desc.get("n", len(found)) != len(found):
        return None, "the dict has more than %d entries" % MAX_ITEMS
    return found, None


def _read_number(kind, desc):
    if desc.get("t") == "bool":
        return None, "expected a number, got True/False (a bool is not a number here)"
    number = _number(desc)
    if number is None:
        return None, "expected %s, got %s" % ("a whole number" if kind == "int" else "a number", _what(desc))
    if kind == "int":
        whole = _whole(number)
        if whole is None:
            return None, "expected a whole number, got " + ("%s that is not whole" % _what(desc))
        return whole, None
    if isinstance(number, float) and not math.isfinite(number):
        return None, "expected a finite number, got %s" % number
    return number, None


_READERS = {"bool": _read_bool, "choice": _read_choice, "int_dict": _read_int_dict}


def read(kind, desc, letters=""):
    """(value, problem): the answer's value in the form ``kind`` asks for, or None and a message that says
    what to fix. ``letters``: the valid choices of a multiple-choice question, e.g. "ABCD"."""
    if not isinstance(desc, dict):
        return None, "could not be read"
    if desc.get("t") == "missing":
        return None, "not answered yet: the variable is not assigned (run its cell)"
    if desc.get("t") == "ellipsis":
        return None, "not answered yet: replace the ... with your answer"
    if kind in _READERS:
        return _READERS[kind](desc, letters)
    if kind in ("int", "float", "scalar"):
        return _read_number(kind, desc)
    return None, "unknown answer kind %r" % kind


def relative_difference(got, expected):
    """|got − expected| / |expected| for numbers (exact where both are exact); inf when expected is 0 and got is not."""
    if expected == 0:
        return 0.0 if got == 0 else math.inf
    return float(abs(Fraction(got) - Fraction(expected)) / abs(Fraction(expected)))


def order_of_magnitude(got, expected):
    """A message for a wrong number that never gives the expected value: direction and power of ten only."""
    if expected == 0 or got == 0 or (got < 0) != (expected < 0):
        return "not the right value (check the sign and the formula)"
    ratio = abs(float(Fraction(got) / Fraction(expected)))
    power = round(math.log10(ratio)) if ratio > 0 else 0
    direction = "too large" if ratio > 1 else "too small"
    if power == 0:
        return "%s, by less than a factor of ten" % direction
    return "%s by about 10^%d" % (direction, abs(power))
