"""Whose fault a bad input is: the student's (SubmissionError: their row, a 0 and what to fix) or the export's
(ExportError: the run stops and says what is wrong with the export as a whole)."""

from __future__ import annotations

from ..inkernel.errors import GraderError
from ..inkernel.text import plain_text


class SubmissionError(GraderError):
    """A submission that cannot be graded; the message is shown to the student and the TA (as plain text: it may
    quote names the student chose)."""

    def __init__(self, message: str):
        super().__init__(plain_text(message))


class ExportError(GraderError):
    """An export that cannot be read as a whole (its metadata, its zip), with what to do."""
