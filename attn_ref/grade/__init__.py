"""One-way grading: submission -> isolated kernel run -> plain data -> trusted scoring -> results.json."""

from .autograder import AutograderError, load_autograder
from .core import grade
from .sandbox import SandboxError

__all__ = ["AutograderError", "SandboxError", "grade", "load_autograder"]
