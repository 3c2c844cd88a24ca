"""Every default time limit of grading, in one place (seconds)."""

from __future__ import annotations

from dataclasses import dataclass

BUDGET = 480.0  # everything for one submission: below Gradescope's default 10 minutes
MARGIN = 30.0  # past the budget, the supervisor ends a grading process that has not finished
NOTEBOOK_TIMEOUT = 180.0  # running the notebook's cells, all together
CELL_TIMEOUT = 120.0  # one notebook cell
CALL_TIMEOUT = 30.0  # one call of a student function
SETUP_TIMEOUT = 60.0  # grading mode and the harness, in a fresh kernel
KERNEL_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Limits:
    """The time limits of one grading."""

    cell: float = CELL_TIMEOUT
    call: float = CALL_TIMEOUT
    notebook: float = NOTEBOOK_TIMEOUT
    budget: float = BUDGET
