"""The intake: every byte a student or an export hands in enters the trusted side here, and only here.

What comes in                      read by               what comes out
a notebook's JSON                  notebook.read         Notebook (typed cells) or SubmissionError
a file, a folder, a submission zip files                 bytes, paths, a checked ZipFile, or SubmissionError
submission_metadata.yml (TA only)  metadata.read         {folder: ExportEntry} (in a child process) or ExportError

Bounds on size, depth, count and time are checked while reading, before memory grows with the input; what is
wrong with a student's file is that student's error (their row: 0 and what to fix), never the grader's. Standard
library (and nbformat for writing) only: Gradescope's grader runs this on Python 3.10 without PyYAML, which the
metadata's child process imports for a TA's export alone.
"""

from .errors import ExportError, SubmissionError

__all__ = ["ExportError", "SubmissionError"]
