"""One-way grading: submission -> isolated kernel run -> plain data -> trusted scoring -> results.json."""

from .core import AutograderError, grade, load_autograder

__all__ = ["AutograderError", "grade", "load_autograder"]
