"""Every time limit and budget of grading, in one place (seconds): ``Limits``, passed whole to local and
cluster runs, and ``Limits.to_flags``, the one place they become `attn-ref grade` flags."""

from __future__ import annotations

from dataclasses import dataclass

BUDGET = 480.0  # everything for one submission: below Gradescope's default 10 minutes
MARGIN = 30.0  # past the budget, the supervisor ends a grading process that has not finished
NOTEBOOK_TIMEOUT = 180.0  # running the notebook's cells, all together
CELL_TIMEOUT = 120.0  # one notebook cell
CALL_TIMEOUT = 30.0  # one call of a student function
SETUP_TIMEOUT = 60.0  # grading mode and the harness, in a fresh kernel
KERNEL_START_TIMEOUT = 60.0
WORKER_MARGIN = 60.0  # past budget + margin, a Dask worker ends its grading process (the backstop's backstop)

# the fields a command line sets, and their flags (cli.py's `attn-ref grade` arguments)
FLAGS = {"budget": "--timeout", "cell": "--cell-timeout", "call": "--call-timeout"}


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The time limits of one grading (seconds)."""

    cell: float = CELL_TIMEOUT
    call: float = CALL_TIMEOUT
    notebook: float = NOTEBOOK_TIMEOUT
    budget: float = BUDGET
    margin: float = MARGIN
    setup: float = SETUP_TIMEOUT
    kernel_start: float = KERNEL_START_TIMEOUT
    worker_margin: float = WORKER_MARGIN

    @classmethod
    def of(cls, budget: float | None = None, cell_timeout: float | None = None, call_timeout: float | None = None,
           notebook_timeout: float | None = None) -> Limits:
        """Limits from keyword seconds (grade()'s ``timeouts``); what is not given keeps its default."""
        given = {"budget": budget, "cell": cell_timeout, "call": call_timeout, "notebook": notebook_timeout}
        return cls(**{k: v for k, v in given.items() if v is not None})

    def to_flags(self) -> list[str]:
        """The command line of a grader that grades under these limits (a Dask worker's)."""
        return [arg for name, flag in FLAGS.items() for arg in (flag, repr(float(getattr(self, name))))]

    @property
    def backstop(self) -> float:
        """Seconds after which a whole grading process is ended from outside (a worker's subprocess)."""
        return self.budget + self.margin + self.worker_margin

