"""One-way grading: submission -> isolated kernel run -> plain data -> trusted scoring -> results.json."""

from .core import AutograderError, grade, load_autograder
from .sandbox import SandboxError

__all__ = ["AutograderError", "SandboxError", "grade", "load_autograder"]
