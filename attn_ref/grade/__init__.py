"""One-way grading: submission -> isolated kernel run -> plain data -> trusted scoring -> results.json.

The rooms, by where their code runs (each room's ``__init__`` says what it may import; tests/test_house.py
holds every file to it), from the ground up:

* ``inkernel/``: INSIDE the student's kernel (never trusted): the harness and what it speaks, the wire
  format and the text rule, which the grader also uses to check every reply;
* ``student_python/``: trusted helpers on the students' interpreter (launcher, kernel image, mistakes' runner);
* ``settings.py``, ``owned.py``, ``withheld.py``, ``checks_json.py`` (the zip's checks, the release's and the
  grader's one schema), ``results.py`` (results.json): plain data and rules, in the grader's process;
* ``isolation/``: starting and confining kernels; ``session.py`` (the conversation with one kernel) and
  ``submission.py`` (reading one);
* ``scoring/``: the trusted scorer; ``core.py``: one submission, end to end;
* ``proofs/``: the instructor's proofs that checks have teeth; ``classroom/``: a TA's batch; ``cli.py``.
"""

from .core import grade
from .inkernel.errors import GraderError
from .isolation.sandbox import SandboxError
from .scoring.autograder import AutograderError, load_autograder

__all__ = ["AutograderError", "GraderError", "SandboxError", "grade", "load_autograder"]
