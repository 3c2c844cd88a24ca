"""grade(): one submission against one autograder, written as Gradescope's results.json.

The flow is one way: the submission is read and run in its own confined kernel (in a grading process
watched by a supervisor), the kernel hands back plain data, and the unit graders score it here with
NumPy and the reference. Only the supervisor's process writes results.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

import attn_ref

from ..portable.written import written_answers
from .checks_json import Checks, FunctionUnit, QuestionUnit, Unit
from .inkernel.text import cap
from .inkernel.wire import Status
from .intake import submission
from .isolation.kernel import KERNEL_NAME, KernelStartError
from .isolation.sandbox import Jail, SandboxError, SandboxPlan, resolve
from .isolation.watchdog import Job, Supervisor
from .results import (
    GRADER_VERSION,
    MAX_NOTES,
    TEXT,
    Outcome,
    Results,
    cap_lines,
    failed_results,
    plain_results,
    results_name,
    write_results,
    written_entries,
)
from .scoring import static
from .scoring.autograder import Autograder, AutograderError, load_autograder
from .scoring.context import REFERENCE_MESSAGE, GradingContext, UnitResults
from .scoring.functions import grade_functions
from .scoring.inputs import seed_for
from .scoring.questions import grade_questions
from .session import BudgetExhausted, NotebookSession, runnable_cells
from .settings import Limits

# one grader per unit kind, in this order: the questions' one read comes before any probe can put a
# stand-in in the kernel (after which nothing the kernel says reaches results: withheld.py)
GRADERS = ((QuestionUnit, grade_questions), (FunctionUnit, grade_functions))

__all__ = ["AutograderError", "SandboxError", "grade", "load_autograder"]


def written_questions(checks: Checks) -> list[tuple[str, str]]:
    return [(item.question, item.prompt) for item in checks.written]


def _static_analysis(code: list[str], units: tuple[Unit, ...]) -> static.Analysis:
    by_name = {u.name: u for u in units}
    tasks = {}
    for u in units:
        if isinstance(u, FunctionUnit):
            stand_ins = [by_name[n].function for n in u.builds_on if by_name[n].substitute]
            tasks[u.name] = (u.function, list(u.forbidden), stand_ins)
    return static.analyse(code, tasks)


@contextlib.contextmanager
def running(nb: submission.Notebook, filename: str, autograder: Autograder, jail: Jail, limits: Limits, deadline: float,
            submitters: tuple | None = None):
    """The notebook run once in its kernel, with its static analysis: a GradingContext for the unit graders."""
    code = nb.code
    analysis = _static_analysis(code, autograder.units)
    session = NotebookSession(runnable_cells(nb), (filename, nb.to_ipynb()), jail,
                              cell_timeout=limits.cell, notebook_timeout=limits.notebook, deadline=deadline,
                              setup_timeout=limits.setup, kernel_start=limits.kernel_start)
    # ended once the grading process has sent its results (watchdog._child: the supervisor starts the next
    # submission meanwhile), or when this process ends whatever happened; nothing of them reaches results
    jail.later.callback(session.shutdown)
    try:
        env = session.environment(limits.call)
    except BudgetExhausted:
        env = {}
    ctx = GradingContext(autograder, session, limits, analysis, seed_for(code, autograder.checks.seed_key), env,
                         submitters=submitters)
    jail.later.callback(ctx.close)  # first: the mistakes' runner, then the kernel
    yield ctx


def grade_units(ctx: GradingContext) -> UnitResults:
    """Every unit by its kind's grader; the entries in the assignment's order."""
    parts = [grader(ctx) for kind, grader in GRADERS if any(isinstance(u, kind) for u in ctx.checks.units)]
    order = {u.name: i for i, u in enumerate(ctx.checks.units)}
    # an entry of no unit (whose numbers a variant was graded with) comes first
    tests = sorted((t for part in parts for t in part.tests), key=lambda t: order.get(t.unit, -1))
    extra = {key: value for part in parts for key, value in part.extra.items()}
    return UnitResults(tests, extra, any(part.timed_out for part in parts))


def _results(ctx: GradingContext, graded: UnitResults, jail: Jail) -> Results:
    checks, session = ctx.checks, ctx.session
    stopped = "; ".join(jail.stopped())
    notes = [f"Graded by attn-ref {attn_ref.__version__} (autograder {checks.version[:12]}).",
             "Public checks look at types and shapes; these hidden checks compare values."]
    if ctx.banned:
        notes.append(REFERENCE_MESSAGE + ".")
    if stopped:
        notes.append(f"The kernel was stopped: {cap(stopped, 300)}.")
    if session.errors:
        notes.append(f"{len(session.errors)} cell(s) raised errors while your notebook ran, for example: {cap(session.errors[0])}")
    status = Status.TIMEOUT if graded.timed_out or session.timed_out else Status.OK
    text = status.value
    if stopped:  # the row says why, in the words the student reads
        text = ("" if status is Status.OK else f"{status.value}; ") + f"stopped: {cap(stopped, 300)}"
    return Results(round(sum(t.score for t in graded.tests), 6), list(graded.tests), cap_lines("\n".join(notes), MAX_NOTES),
                   TEXT, {"status": text, "timed_out": status is Status.TIMEOUT, "outcome": Outcome.GRADED.value,
                          "seed": ctx.seed, "kernel": ctx.env,
                          "cell_errors": [cap(e) for e in session.errors[:20]], "kernel_restarts": session.restarts,
                          "integrity_flags": ctx.analysis.flags[:50], **graded.extra})


def grade_in_jail(submission_path, autograder: Autograder, jail: Jail, limits: Limits, submitters: tuple | None = None) -> Results:
    """Job.run: everything about one submission, in the grading process; always returns results."""
    start = time.monotonic()
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nb, filename = submission.load(submission_path)
            submission.check_assignment(nb, autograder.name)
            for warning in nb.warnings:  # fields grading does not read, with a wrong type: ignored, and said
                warnings.warn(warning, stacklevel=1)
            if nb.kernel_name not in (None, KERNEL_NAME):
                warnings.warn(f"the notebook names kernel {nb.kernel_name!r}; grading uses {KERNEL_NAME!r}", stacklevel=1)
            with running(nb, filename, autograder, jail, limits, start + limits.budget, submitters) as ctx:
                results = _results(ctx, grade_units(ctx), jail)
            results.tests += written_entries(autograder.checks, written_answers(nb.as_dict(), written_questions(autograder.checks)))
    except submission.SubmissionError as err:  # the notebook itself (corrupt, another assignment): its 0 stands
        results = failed_results(autograder.checks, str(err), Outcome.STUDENT)
    except KernelStartError as err:  # before any student code ran: the environment's fault, so no grade exists
        results = failed_results(autograder.checks, str(err), Outcome.NOT_GRADED)
    except Exception as err:  # a grader bug must still leave a results file and a reason, and no made-up 0
        traceback.print_exc()
        results = failed_results(autograder.checks, f"internal grader error ({type(err).__name__}: {cap(str(err), 200)}); please tell your TA",
                                 Outcome.NOT_GRADED, f"not graded: the grader failed ({type(err).__name__}: {cap(str(err), 200)})")
    results.execution_time = round(time.monotonic() - start, 2)
    results.extra["warnings"] = [cap(str(w.message)) for w in caught[:10]]
    return results


def make_job(key: str, submission_path, autograder: Autograder, plan: SandboxPlan, limits: Limits,
             submitters: tuple | None = None) -> Job:
    """A supervisor's job for one submission: graded in its own process, failed results if it cannot be.
    ``submitters``: the platform's list of the submission's students (None: none known)."""
    checks = autograder.checks

    def failed(reason: str, status: str | None, fault: Outcome) -> Results:
        return record(failed_results(checks, reason, fault, status), checks, plan)

    def run(jail: Jail) -> Results:
        return record(grade_in_jail(submission_path, autograder, jail, limits, submitters), checks, plan)

    return Job(key, run, failed, limits.budget, Path(submission_path), limits, submitters)


def warm_up() -> None:
    """Import, in the process that forks the grading processes, what each of them would otherwise import on first
    use, so that every fork shares it: the reference's array namespace (array_api_compat copies numpy's namespace,
    which imports numpy.f2py, numpy.testing and unittest: about 0.08 CPU-seconds) and ipykernel's kernelspec,
    which jupyter_client loads to find the `python3` kernel. Nothing of a submission is involved."""
    from ipykernel import kernelspec  # noqa: F401

    from .._arrays import namespace

    namespace(np.zeros(1))


def prepare(autograder, plan: SandboxPlan | None) -> tuple[Autograder, SandboxPlan]:
    """The autograder, validated, and the sandbox plan of this run (resolved once; GPU runners adjust it)."""
    if not isinstance(autograder, Autograder):
        autograder = load_autograder(autograder)
    plan = plan or resolve(autograder.path if autograder.path.is_dir() else None)
    return autograder, (plan.for_gpu() if autograder.checks.runner == "gpu" else plan)


def record(results: Results, checks: Checks, plan: SandboxPlan) -> Results:
    """What every results file says about the grader, whatever happened to the submission."""
    extra = results.extra
    extra.update(
        assignment=checks.assignment,
        autograder_version=checks.version,
        **{GRADER_VERSION: attn_ref.__version__},
        sandbox=plan.describe(),
        grader={"python": platform.python_version(), "numpy": np.__version__, "uid": os.geteuid(),
                "kernel_python": plan.python},
    )
    extra["warnings"] = list(extra.get("warnings", [])) + list(plan.warnings)
    return results


def grade(submission_path, autograder, out_dir=None, results_path=None, *, limits: Limits | None = None,
          plan: SandboxPlan | None = None, write: bool = True, submitters: list | None = None, **timeouts: float) -> dict:
    """Grade one submission; write results to ``results_path`` or ``out_dir/results/<name>.json``.

    Always writes results, also when the submission is unreadable, the kernel cannot start, the grading
    hangs or the budget runs out; only an unusable autograder (AutograderError) or student environment
    (SandboxError) raises, before anything runs. ``timeouts``: budget, cell_timeout, call_timeout,
    notebook_timeout (seconds), or a whole ``limits``. ``submitters``: the platform's [{"email", "sid"}] of the
    submission, which decide whose variant of a question with parameters is graded (None: none known).
    """
    autograder, plan = prepare(autograder, plan)
    limits = limits or Limits.of(**timeouts)
    job = make_job("submission", submission_path, autograder, plan, limits,
                   None if submitters is None else tuple(submitters))
    [done] = Supervisor(plan, margin=limits.margin).finished([job])
    results = plain_results(done.results)  # what is written, and what the caller reads: the text rule applied
    if write:
        if results_path is None:
            results_path = Path(out_dir or ".") / "results" / results_name(submission_path)
        write_results(Path(results_path), results)
    return results
