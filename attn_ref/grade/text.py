"""Text from the student's side, made safe to keep and show: bounded, encodable, no control characters.

Standard library only: sent into the kernel with the harness (see ``session.KERNEL_MODULES``), and used by
the trusted side on everything a kernel or a submission file says.
"""

import re

from ..typerules import MAX_TEXT  # sent with the harness

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline: escapes, carriage returns


def encodable(text: str) -> str:
    """Text UTF-8 can encode: lone surrogates (a JSON escape such as \\ud800 makes them) become "?"."""
    return text.encode("utf-8", "replace").decode("utf-8")


def plain_text(text: str) -> str:
    """Text that can be written anywhere: encodable, and control characters (terminal escapes, carriage
    returns) become "?"."""
    return _CONTROL.sub("?", encodable(text))


def cap(text, limit: int = MAX_TEXT) -> str:
    """Student-originated text, as a bounded plain string."""
    return plain_text(text[:limit]) if isinstance(text, str) else ""
