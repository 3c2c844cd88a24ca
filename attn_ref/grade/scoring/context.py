"""What a unit grader gets: one notebook's run, and everything it may score against."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checks_json import Checks
from ..results import TestResult
from ..session import NotebookSession
from ..settings import Limits
from .autograder import Autograder
from .mutant_match import MistakeRunner
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
    mistake_runner: MistakeRunner | None = None  # started at the first failed probe (mutant_match.py)
    called: dict[str, list] = field(default_factory=dict)  # task -> [(probe, inputs)] of its CPU and meta calls, in order
    name_mistakes: bool = True  # off where only verdicts matter (many seeds of trusted code: messages unread)
    submitters: tuple | None = None  # the platform's [{"email", "sid", "name"}] of this submission; None: no such list

    def mistakes(self) -> MistakeRunner:
        if self.mistake_runner is None:
            self.mistake_runner = MistakeRunner(self.session.jail.plan.python, self.checks.helpers, self.session.jail.image,
                                               self.limits.mutants_reply)
        return self.mistake_runner

    def close(self) -> None:
        if self.mistake_runner is not None:
            self.mistake_runner.close()

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

    tests: list[TestResult]
    extra: dict = field(default_factory=dict)
    timed_out: bool = False
