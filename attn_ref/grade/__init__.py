"""One-way grading: submission -> isolated kernel run -> plain data -> trusted scoring -> results.json.

The rooms, by trust:

* ``inkernel/``: code that runs INSIDE the student's kernel (never trusted; it imports only the standard
  library, numpy and torch, and the modules ``session.KERNEL_MODULES`` sends with it);
* ``wire.py``, ``text.py``, ``errors.py``: the boundary: what crosses between the kernel and the grader, and
  how its text is made safe (sent into the kernel too, and used by the grader to validate every reply);
* ``isolation/``: starting and confining kernels (sandbox, launcher, the kernel image, cleanup, limits, watchdog);
* ``scoring/``: the trusted scorer (the checks' schema, inputs, comparators, one grader per unit kind,
  static analysis): it reads plain data only;
* ``classroom/``: a TA's batch (discovery, cluster, gradebook, report, Canvas, written pages);
* ``core.py`` (one submission, end to end), ``session.py`` (the conversation with one kernel),
  ``results.py`` (results.json), ``cli.py`` (the grade verb).
"""

from .autograder import AutograderError, load_autograder
from .core import grade
from .errors import GraderError
from .isolation.sandbox import SandboxError

__all__ = ["AutograderError", "GraderError", "SandboxError", "grade", "load_autograder"]
