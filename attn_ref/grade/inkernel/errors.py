"""The one base of the grader's errors: ``except GraderError`` catches everything the grader raises on purpose.

Standard library only: sent into the kernel with the harness (the wire format's MalformedReply is one).
Each error says what is wrong in words a TA or student can act on; a grading's outcome is never read
from an error's text (see ``results.Outcome`` and ``wire.Status``).
"""


class GraderError(Exception):
    """Something the grader could not do, with the reason."""
