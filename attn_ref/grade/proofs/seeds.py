"""Verdicts under many seeds: a notebook run once, its function units' probes graded once per seed."""

from __future__ import annotations

import time

from ..core import prepare, running
from ..intake import submission
from ..isolation.sandbox import Jail, SandboxPlan
from ..isolation.watchdog import run_alone
from ..scoring.functions import grade_functions
from ..settings import Limits


def grade_under_seeds(submission_path, autograder, seeds: list[int], *, plan: SandboxPlan | None = None,
                      **timeouts: float) -> dict[int, dict[str, dict]]:
    """{seed: {unit: results entry}}: a notebook run once, its function units' probes run once per seed (to prove
    that verdicts do not depend on the seed). Raises if the notebook could not be run."""
    autograder, plan = prepare(autograder, plan)
    limits = Limits.of(**timeouts)
    budget = 120.0 + 60.0 * len(seeds)

    def run(jail: Jail) -> dict:
        nb, filename = submission.load(submission_path)
        per_seed = {}
        with running(nb, filename, autograder, jail, limits, time.monotonic() + budget) as ctx:
            ctx.name_mistakes = False  # verdicts under many seeds: the messages are not read
            for seed in seeds:
                ctx.seed = seed
                # each seed is its own grading of trusted code (the corpus, mutants): a stand-in sent under an
                # earlier seed must not withhold this seed's messages; student gradings never come here
                ctx.session.tainted = False
                per_seed[str(seed)] = {t.unit: t.to_json() for t in grade_functions(ctx).tests}
                # a seed's calls are graded: their folders go, or a long run's files add up past the sandbox's
                # limits and the kernel dies mid-call ("the call crashed the kernel" from about the 46th seed)
                ctx.session.clear_exchanges()
        return {"per_seed": per_seed}

    per_seed = run_alone(plan, "seeds", run, budget, "per_seed")
    return {int(seed): tests for seed, tests in per_seed.items()}
