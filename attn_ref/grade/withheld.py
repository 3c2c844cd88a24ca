"""What of a kernel's words may reach results once a hidden stand-in's code has reached that kernel.

A stand-in (a known-correct earlier function, bound while a later task is graded) is executed in the
student's kernel, where the student's code can read it (walk the harness's frames, keep it for a later
call). From then on, for the rest of the submission and across restarts, nothing the kernel wrote reaches
results: no exception message, no name of the student's own exception class, no shape, count or
relative error measured from its outputs. A line says whether its probe passed, that a stand-in was in
place, and at most the builtin exception type that ended the call. What remains is a few bits per
submission, through which probes pass and fail (docs/security.md, "What this does not stop").
"""

from __future__ import annotations

import builtins

FORBIDDEN_NAMES = "a function (its name is withheld)"  # what the tripwire reported, once a stand-in is there
WITHHELD = "failed while a correct stand-in was in place; details are withheld, so nothing of it can be read back"
_BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                                if isinstance(value, type) and issubclass(value, BaseException))


def exception_type(error: str | None) -> str:
    """The builtin exception type an error text starts with ("ValueError: ..."), else ""; never the rest."""
    name = (error or "").split(":", 1)[0].strip()
    return name if name in _BUILTIN_EXCEPTIONS else ""


def failure(error: str | None = None) -> str:
    """A failed line's whole message while a stand-in is in the kernel."""
    name = exception_type(error)
    return f"{WITHHELD} (it raised {name})" if name else WITHHELD


def cell_error(index: int, error: str | None) -> str:
    """A cell's error while a stand-in is in the kernel: its number and builtin exception type at most."""
    name = exception_type(error)
    return f"code cell {index + 1}: " + (f"{name} (details withheld)" if name else "an error (details withheld)")
