"""The `attn-ref grade` verb: what it prints and exits with (one submission or a class); its options are in arguments.py."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from .arguments import DEFAULT_OUT
from .classroom.adjustments import FILE as ADJUSTMENTS_FILE
from .classroom.batch import BatchOptions, check_assignment, plan_batch, run_batch
from .classroom.canvas import RosterError, read_roster
from .classroom.discover import Submission, has_notebook, is_batch
from .classroom.gradebook import summary_lines
from .classroom.worker_service import REFUSED, UNSANDBOXED
from .core import grade
from .inkernel.errors import GraderError
from .inkernel.text import plain_text
from .intake.submission import files
from .isolation.cleanup import make_undumpable
from .isolation.sandbox import SandboxPlan, resolve
from .owned import private_folder
from .results import FILE_HASH, Results, results_name, write_results
from .scoring.autograder import load_autograder
from .scoring.whose_variant import gradescope_submitters
from .settings import Limits

UNAPPLIED_ADJUSTMENTS = 4  # a class graded, but a row of its adjustments.csv cannot be applied, or its score sheet read (no canvas.csv)
CANVAS_FILLS_NOTHING = 5  # a class graded with --canvas-roster, but canvas.csv gives no roster row a score


def _readable_by_others(path: Path) -> bool:
    """Whether a user other than its owner can read it (a file, or a folder or any file in it: the first
    files of a huge one)."""
    try:
        paths = [path] if path.is_file() else [path, *files(path)[0]]
        return any(p.stat().st_mode & stat.S_IROTH for p in paths if not p.is_symlink())
    except OSError:
        return False


def say(*lines: str, file=None) -> None:
    """Print the grader's lines, each made plain (text.py): a file or student name in one cannot start another."""
    print("\n".join(plain_text(line) for line in lines), file=file or sys.stdout)


def _single_results_path(out: Path, submission: Path) -> tuple[Path, str]:
    """OUT/results/<stem>.json, unless that file holds another submission's results: never overwrite them."""
    path = out / "results" / results_name(submission)
    file_digest = hashlib.sha256(submission.read_bytes() if submission.is_file() else str(submission.resolve()).encode()).hexdigest()
    if path.exists():
        try:
            same = Results.read(path, with_extra=False).recorded_hash(FILE_HASH) == file_digest
        except (OSError, ValueError):
            same = False
        if not same:
            path = path.with_name(f"{path.stem}-{file_digest[:8]}.json")
    return path, file_digest


def _written_files(out: Path, written: list[str]) -> list[str]:
    """What this run wrote, for the TA to open (never a file an earlier run left: Gradebook.written)."""
    labels = {"grades.csv": "gradebook", "summary.png": "summary chart", "written": "written answers",
              "mistakes.csv": "named mistakes", "mistakes.png": "mistakes chart", "report.html": "integrity",
              "adjustments.csv": "TA adjustments", "canvas.csv": "Canvas import",
              "canvas-missing.csv": "students with no grade", "canvas-unmatched.csv": "students not in the roster"}
    return [f"{label}: {out / name}" for name, label in labels.items() if name in written]


def _terminated(signum, frame):
    raise KeyboardInterrupt  # a terminated grader ends its kernels and jails as an interrupted one does


class _Stop(GraderError):
    """A check before grading failed: what to print (stderr), and the exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.message, self.code = message, code


@dataclass(frozen=True)
class GradeRequest:
    """One `attn-ref grade` command, validated (by ``validate``): what to grade, how, and where to."""

    submission: Path
    autograder: str
    out: Path
    results: str | None  # Gradescope's mode: exactly this file
    plan: SandboxPlan
    limits: Limits
    canvas: dict | None
    batch: bool
    jobs: int | None  # a batch's parallel gradings (None: one per core)
    force: bool  # a batch grades again what it has graded
    cluster: str | None  # a batch's Dask scheduler (or local:N)
    submitters: tuple | None = None  # one submission's, from --submitters (None: no list)
    kernel_image: bool = True  # a batch starts its kernels from one image where it may (isolation/image.py)


def run_grade(args) -> int:
    _guard_this_process()
    try:
        request = validate(args)
    except _Stop as stop:
        say(f"attn-ref grade: {stop.message}", file=sys.stderr)
        return stop.code
    if request.batch:
        return _grade_class(request)
    return _grade_one(request)


def _guard_this_process() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    if os.geteuid() != 0:
        make_undumpable()  # a kernel running as this user cannot read this process's environment or memory


def validate(args) -> GradeRequest:
    """The command's arguments checked before anything is graded; _Stop says what is wrong."""
    submission = Path(args.submission)
    if args.results is None:  # a TA's command: a path that is not there is a mistake to say, not to grade
        _check_submission(submission)
    plan = resolve(args.autograder if Path(args.autograder).is_dir() else None, python=args.kernel_python,
                   namespaces=args.namespaces)
    if args.require_isolation and plan.unsandboxed:
        raise _Stop(UNSANDBOXED, REFUSED)
    _warn(plan, args.autograder, submission)
    if args.cluster:  # a tls:// scheduler's client certificate and CA, before anything is read or written
        from .classroom.cluster_tls import check_address  # here: Dask is not in the grader's own environment

        check_address(args.cluster)
    limits = Limits.of(budget=args.timeout, cell_timeout=args.cell_timeout, call_timeout=args.call_timeout)
    return GradeRequest(submission, args.autograder, Path(args.out or DEFAULT_OUT), args.results, plan, limits,
                        _canvas(args), args.results is None and is_batch(submission), args.jobs, args.force,
                        args.cluster, _submitters(args.submitters), args.kernel_image == "auto")


def _submitters(path: str | None) -> tuple | None:
    """--submitters: Gradescope's submission_metadata.json, read field by field (a file that is not there or not
    JSON means no list: the notebook's identity is then graded unverified, and the results say so)."""
    if path is None:
        return None
    try:
        return gradescope_submitters(json.loads(Path(path).read_text()))
    except (OSError, ValueError):
        print(f"attn-ref grade: --submitters {path}: not a readable submission_metadata.json; grading without it", file=sys.stderr)
        return None


def _check_submission(submission: Path) -> None:
    if not submission.exists():
        raise _Stop(f"{submission} does not exist")
    if not has_notebook(submission):
        raise _Stop(f"{submission} holds no notebook (.ipynb) and no zip")


def _warn(plan: SandboxPlan, autograder: str, submission: Path) -> None:
    for warning in plan.warnings:
        say(f"attn-ref grade: {warning}", file=sys.stderr)
    if not (plan.fresh_uids and not plan.bwrap):
        return
    for path, what in ((Path(autograder), "its checks"), (submission, "the students' work")):
        if _readable_by_others(path):
            say(f"attn-ref grade: {path} can be read by every user, so by the kernels too ({what}: their uid is not "
                "yours, but without namespaces they see this machine's files): "
                f"chmod -R go-rwx {path}", file=sys.stderr)


def _canvas(args) -> dict | None:
    """--export canvas: its roster, checked before grading (a wrong file stops here)."""
    if args.export != "canvas":
        return None
    if not args.canvas_roster:
        raise _Stop("--export canvas needs --canvas-roster, the Canvas gradebook export (CSV)")
    if not Path(args.canvas_roster).is_file():
        raise _Stop(f"--canvas-roster {args.canvas_roster}: no such file (the course's Canvas gradebook export, CSV)")
    try:
        read_roster(Path(args.canvas_roster))
    except (RosterError, OSError) as err:
        raise _Stop(str(err)) from None
    return {"roster": Path(args.canvas_roster), "assignment": args.canvas_assignment,
            "login_domain": (args.canvas_login_domain or "").strip().lstrip("@") or None}


def _grade_class(request: GradeRequest) -> int:
    options = BatchOptions(jobs=request.jobs, force=request.force, plan=request.plan, progress=True,
                           canvas=request.canvas, cluster=request.cluster, limits=request.limits,
                           kernel_image=request.kernel_image)
    report = run_batch(plan_batch(request.submission, request.autograder, request.out, options))
    out, plan = request.out, request.plan
    if report.interrupted:  # the partial gradebook's summary says who has no grade yet
        say(*summary_lines(report.book))
        say(f"interrupted: {report.graded} graded — rerun to resume (gradebook so far: {out / 'grades.csv'})",
            file=sys.stderr)
        return 130
    meanwhile = f", {report.by_another_run} graded meanwhile by another run on {out}" if report.by_another_run else ""
    retry = f", {report.not_graded} left without a grade (listed below; the next run retries them)" if report.not_graded else ""
    say(f"{report.total} submissions: {report.graded} graded{retry}, {report.skipped} unchanged since the last run{meanwhile} "
        f"(kernels: {plan.mode})")
    say("; ".join(_written_files(out, report.book.written)))
    if report.not_submissions:
        say(f"not graded: {', '.join(report.not_submissions)}")
    if report.kernel_start and (report.graded or report.not_graded):  # a run that graded nothing started no kernel
        say(f"kernels {report.kernel_start}")
    say(*summary_lines(report.book))
    if report.book.unreadable_sheet:
        say(f"attn-ref grade: {out / 'written' / 'scores.csv'} cannot be read ({report.book.unreadable_sheet}): mend it "
            "and run again", file=sys.stderr)
    if report.book.adjustments is not None and report.book.adjustments.holds_back_import:
        say(f"attn-ref grade: {out / ADJUSTMENTS_FILE} has rows that cannot be applied (the warnings above say which "
            "and why): mend or delete them and run again", file=sys.stderr)
    if report.book.holds_back_import:
        return UNAPPLIED_ADJUSTMENTS
    if report.book.canvas_filled == 0:
        say("attn-ref grade: canvas.csv gives no student of the roster a score: no submission matched a roster row "
            "(by SID or email; canvas-unmatched.csv says why for each). Check that --canvas-roster is this course's "
            "gradebook export and that the class is Gradescope's export (its metadata names the students), not "
            "folders without names", file=sys.stderr)
        return CANVAS_FILLS_NOTHING
    return 0


def _grade_one(request: GradeRequest) -> int:
    submission, plan = request.submission, request.plan
    if request.results is None:  # a TA's single notebook of another assignment is a wrong --autograder: exit 2
        autograder = load_autograder(request.autograder)
        check_assignment([Submission("submission", submission)], autograder)
    else:  # Gradescope's mode: whatever the notebook, a results file (score 0, with why) and exit 0
        autograder = request.autograder
    try:
        if request.results is not None:
            results = grade(submission, autograder, results_path=request.results, plan=plan, limits=request.limits,
                            submitters=request.submitters)
        else:
            private_folder(private_folder(request.out) / "results")  # the owner's alone (owned.py)
            path, file_digest = _single_results_path(request.out, submission)
            results = grade(submission, autograder, results_path=path, plan=plan, write=False, limits=request.limits,
                            submitters=request.submitters)
            results = Results.load(results)  # grade() returns results.json's dict
            results.extra[FILE_HASH] = file_digest
            write_results(path, results)
            say(f"results: {path}")
    except KeyboardInterrupt:
        say(f"interrupted: {submission} was not graded", file=sys.stderr)
        return 130
    _print_grade(submission, results, plan)
    return 0


def _print_grade(submission: Path, results: dict | Results, plan: SandboxPlan) -> None:
    results = Results.load(results)
    if not results.has_grade:  # its 0s are no grade: never printed as one
        say(f"{submission}: no grade ({results.status}; kernel: {plan.mode})")
        return
    say(f"{submission}: {results.score:g} / {results.max_score:g} ({results.status}; kernel: {plan.mode})")
    for test in results.tests:
        say(f"  {test.name}: {test.score:g} / {test.max_score:g}")
