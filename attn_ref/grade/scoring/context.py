"""What a unit grader gets: one notebook's run, and everything it may score against."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..autograder import Autograder
from ..session import NotebookSession
from ..settings import Limits
from .checks import Checks
from .static import Analysis

REFERENCE_MESSAGE = "the notebook uses attn_ref, the grader's reference; auto-graded answers score 0"


@dataclass
class GradingContext:
    autograder: Autograder
    session: NotebookSession
    limits: Limits
    analysis: Analysis
    seed: int
    env: dict = field(default_factory=dict)  # what the kernel said it runs on (for the record, and CUDA)

    @property
    def checks(self) -> Checks:
        return self.autograder.checks

    @property
    def banned(self) -> bool:
        """The notebook reaches for the grader's reference: every auto-graded answer scores 0."""
        return self.analysis.uses_reference


@dataclass
class UnitResults:
    """What a unit grader hands back: the results entries, extra_data to record, and whether anything timed out."""

    tests: list[dict]
    extra: dict = field(default_factory=dict)
    timed_out: bool = False
