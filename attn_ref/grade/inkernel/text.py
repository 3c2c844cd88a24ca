"""The one rule for text from the student's side (messages, names, identities, file names, an export's
metadata): bounded, encodable, visible, and never more lines than the grader gave it room for.

Every character that is not shown as itself becomes "?": the C0 and C1 controls and DEL (terminal escapes,
carriage returns, NUL, backspace), the format characters (bidirectional overrides and isolates, which
reorder what a reader sees, and the zero-width ones), the Unicode line and paragraph separators, and lone
surrogates (a JSON escape such as \\ud800 makes them; UTF-8 cannot encode them). Student text is one line
(``plain_text``, ``cap``) wherever it is placed in a line of the grader's: a newline in it is a "?" too, so
it can never begin a line of the grader's own format ("✓ c1 … (3/3)", "N submissions ok"). Only a body the
grader shows as a block of its own (a written answer, code in the integrity report, each escaped inside
``<pre>``) keeps its line breaks and tabs (``plain_lines``).

Standard library only: sent into the kernel with the harness (see ``session.KERNEL_MODULES``), and used by
the trusted side on everything a kernel or a submission file says.
"""

import re

from ...portable.typerules import MAX_TEXT  # sent with the harness

# Unicode's categories Cc (controls), Cf (format), Zl and Zp (line and paragraph separators) and Cs (surrogates),
# and its Default_Ignorable_Code_Point characters (drawn as nothing: the Hangul fillers, the combining grapheme
# joiner, variation selectors, Mongolian free variation selectors), and the blank Braille pattern, as of
# Unicode 14 (Python 3.11): written out, since the kernel's Python may have another unicodedata.
_INVISIBLE = ("\x7f-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
              "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ud800-\udfff\ufe00-\ufe0f\ufeff"
              "\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
              "\U000e0000-\U000e0fff")
_ONE_LINE = re.compile(f"[\x00-\x1f{_INVISIBLE}]")  # C0 whole: newline and tab too
_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")  # C0 but tab and newline


def encodable(text: str) -> str:
    """Text UTF-8 can encode: lone surrogates become "?" (the rest of the rule is plain_text's)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def plain_text(text: str) -> str:
    """Student text as one line, for anywhere: every invisible character (above), newlines and tabs
    included, becomes "?"."""
    return _ONE_LINE.sub("?", text)


def plain_lines(text: str) -> str:
    """Student text as a block of lines, for a body shown on its own (escaped inside <pre>): the rule of
    plain_text, but newlines and tabs stay (a carriage return does not: "\\r\\n" becomes "\\n")."""
    return _LINES.sub("?", text.replace("\r\n", "\n"))


def cap(text, limit: int = MAX_TEXT) -> str:
    """Student-originated text, as a bounded line of plain text ("" for anything not a string)."""
    return plain_text(text[:limit]) if isinstance(text, str) else ""
