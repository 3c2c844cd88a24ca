"""The release verbs of `attn-ref`: answers, build, check, requirements, lock (the instructor's side).

`attn_ref/cli.py` builds the parser and calls ``add_verbs``; the autograder zip carries no attn_ref.release,
so these verbs exist only in a checkout.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .errors import ReleaseError
from .paths import find_course


def _course(args, new: bool = False) -> Path:
    """--course, else the course found from the working folder (paths.find_course), said on stderr; ``new``:
    where there is none, ./course (`attn-ref new` starts one)."""
    if getattr(args, "resolved_course", None) is None:
        found = Path(args.course).resolve() if args.course else find_course()
        if found is None and new:
            found = Path.cwd() / "course"
        if found is None:
            raise ReleaseError(f"no course in {Path.cwd()} or above it (a folder with registry.py, or a course/ "
                               "holding one): run this from your course's checkout, or pass --course DIR")
        if not args.course:  # found, not given: say which
            print(f"course: {found}", file=sys.stderr)
        args.resolved_course = found
    return args.resolved_course


def _answers(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from .course import load_course

    assignments = [a for a in load_course(_course(args), args.only) if a.questions]
    for assignment in assignments:
        whose = f"{args.variant}'s variant" if args.variant else "the default variant (the note's numbers)"
        table = Table(title=f"{assignment.name}: answer key, {whose} (computed in {assignment.folder.name}/<question>/question.py)")
        table.add_column("variable")
        table.add_column("value", justify="right")
        table.add_column("numbers")
        for q in assignment.questions:
            values = q.numbers_of(assignment.layout.variant_key, args.variant or "")
            numbers = ", ".join(f"{k} = {v}" for k, v in values.items())
            for answer in (q.answers_for(values) if q.parameters else q.answers):
                value = answer.expected
                table.add_row(answer.name, f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value),
                              numbers)
        Console().print(table)
    return 0


def _print_rows(rows, title: str) -> bool:
    """The check's table, then each failure in full under it, as plain lines: a narrow column cut a NameError
    over four rows and an emoji into "?"."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    for column in ("assignment", "check", "result"):
        table.add_column(column)
    table.add_column("detail", overflow="fold")  # folded, never cut: a file name is read whole
    failed = [row for row in rows if not row.ok]
    for row in rows:
        detail = Text(row.detail) if row.ok else Text(f"failure {failed.index(row) + 1}, in full below")
        table.add_row(row.assignment, row.check, "[green]ok[/green]" if row.ok else "[red]FAILED[/red]", detail)
    Console(width=160).print(table)
    for number, row in enumerate(failed, 1):
        print(f"\nfailure {number}: {row.assignment}: {row.check}\n{row.detail}")
    return not failed


def _build(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from .build import BuildError, build
    from .check import check_release
    from .course import load_course

    console = Console()
    out = Path(args.out).resolve() if args.out else _course(args).parent  # beside the course, as make release
    failures: list = []

    def verify(staged: Path, built) -> None:
        rows = check_release(staged, _course(args), [b.autograder for b in built])
        if not _print_rows(rows, "attn-ref check (on the staged release)"):
            failures.extend(r for r in rows if not r.ok)
            raise BuildError("the release failed its checks; nothing was moved into place")

    load_course(_course(args), args.only)  # a bad course or --only: say so before any work
    started = time.monotonic()

    def say(line: str) -> None:  # a line per phase, on a terminal or in a log
        console.print(f"[{time.monotonic() - started:5.0f} s] {line}", markup=False, highlight=False)

    try:
        with console.status("building (otter assign, executing solutions, checking)..."):
            built = build(out, _course(args), only=args.only, runner=args.runner, pdf=args.pdf,
                          verify=None if args.no_check else verify, with_otter_zip=args.otter_zip, say=say)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (build._terminable): the staging folder and the check's are gone
        print("attn-ref build: stopped; nothing was moved into place (what the check swept stays in the course's "
              "record)", file=sys.stderr)
        return 130
    table = Table(title=f"attn-ref build -> {out}")
    for column in ("assignment", "otter assign s", "solution run s", "total s"):
        table.add_column(column)
    for b in built:
        seconds = ("cached", "cached") if b.cached else (f"{b.seconds_otter_assign:.1f}", f"{b.seconds_solution:.1f}")
        table.add_row(b.name, *seconds, f"{b.seconds_total:.1f}")
    console.print(table)
    for b in built:
        for path in (b.student, b.solution, b.autograder, *([b.otter_zip] if b.otter_zip else [])):
            console.print(f"  {path.relative_to(out)}")
        for warning in b.warnings:
            console.print(f"[yellow]warning ({b.name}):[/yellow] {warning}")
    return 0


def _check(args) -> int:
    from .check import check_release

    release = Path(args.release).resolve() if args.release else _course(args).parent
    rows = check_release(release, _course(args), [Path(z).resolve() for z in args.zips] or None, args.sweep_seeds)
    return 0 if _print_rows(rows, f"attn-ref check ({release})") else 1


def _new(args) -> int:
    from .scaffold import new

    kind, unit = ("task", args.task) if args.task else ("question", args.question) if args.question else (None, None)
    course = _course(args, new=True)
    for line in new(course, args.assignment, kind, unit, args.function, args.title):
        print(line)
    shown = os.path.relpath(course)
    where = "" if find_course() == course else f" --course {course if shown.startswith('..') else shown}"
    print(f"in {course}; next: attn-ref build{where} --only {args.assignment} --out {args.assignment}-release")
    return 0


def _requirements(args) -> int:
    from .locks import locked, ranges

    print(ranges(args.environment) if args.ranges else locked(args.environment), end="")
    return 0


def _lock(args) -> int:
    from .locks import write_locks

    for path in write_locks():
        print(f"wrote {path}")
    return 0


ANSWERS_HELP = """Print the answer key of every assignment of the course that has questions: each answer variable and the
value its question.py computes with attn_ref (the numbers the hidden checks compare with)."""
ANSWERS_EXAMPLES = """examples:
  attn-ref answers                      # every assignment of course/ with questions
  attn-ref answers --only practice      # one assignment
  attn-ref answers --variant ana@uni.edu   # one student's numbers and key
  attn-ref answers --course tests/fixtures/stats_course
"""

BUILD_HELP = """Build every assignment of the course into a staging folder, run `attn-ref check` on it, and only then
move assignments/, solutions/ and autograder/ into place (a failed build changes nothing)."""
BUILD_EXAMPLES = """examples:
  attn-ref build                              # into this checkout, as `make release` does
  attn-ref build --out release-lab --only lab
  attn-ref build --runner gpu --pdf           # <name>-autograder-gpu.zip; the export also makes otter's PDF
  attn-ref build --otter-zip                  # also otter's own zip, for otter run / otter grade
"""

CHECK_EXAMPLES = """examples:
  attn-ref check                                       # the release in this checkout, every zip
  attn-ref check --release /tmp/release
  attn-ref check autograder/lab-autograder.zip
"""

NEW_HELP = """Start an assignment, or a unit in one, from a template that builds and passes `attn-ref check` as it is:
the assignment's folder (assignment.py, intro.md) and its line in registry.py; a function task (prompt.md,
solution.py, task.py with its probes, public_checks.py, one mutant in mutants/, and its NumPy reference
<name>_ref.py beside the units) or a numeric question (prompt.md, question.py, solution.py), listed in
assignment.py's units. Nothing is overwritten: an existing file or unit is refused, by name, before anything
is written; a registry or layout that is not a plain list gets the line to add by hand."""
NEW_EXAMPLES = """examples:
  attn-ref new week32 --task c1                 # a new assignment with one function task, c1(x, axis=-1)
  attn-ref new week32 --question q1             # a numeric question after it
  attn-ref new week32 --task c2 --function scaled_attention
  attn-ref new week33 --title "Lab 3.3: transformers" --course ~/my-course
  attn-ref build --only week32 --out week32-release  # builds it, then runs attn-ref check on it
"""

REQUIREMENTS_HELP = """Print the lock of one environment (locks/<environment>.txt), as pip reads it: the students' (numpy,
torch, otter, matplotlib: what graded kernels run in, and what students install) or the grader's (no torch).
With --ranges, the ranges of pyproject.toml the lock was resolved from."""
REQUIREMENTS_EXAMPLES = """examples:
  attn-ref requirements student > requirements.txt && pip install -r requirements.txt
  attn-ref requirements grader --ranges
"""

LOCK_HELP = """Resolve each environment's ranges (pyproject.toml) into exact pins with uv, once for every platform
(uv pip compile --universal --python-version 3.10: Gradescope's Python 3.10, and students' Linux, macOS and
Windows), and write locks/student.txt and locks/grader.txt. Needs uv and the network; `make lock` runs it."""
LOCK_EXAMPLES = """examples:
  make lock                 # installs uv into .venv, then runs attn-ref lock
  attn-ref lock             # the same, where uv is installed
  git diff locks/           # what changed; rebuild (make release) and check before you commit
"""

CHECK_DESCRIPTION = """attn-ref check: a release proves itself before anyone uploads it.

For each autograder zip, through the zip's own bundled grader and the students' environment: the solution
scores full and the blank notebook 0 (as root, also through the zip's run_autograder); the solution agrees
with every answer key; every public check passes on the solution and none on the blank starter; every hidden probe is failed by at least
one of its task's mutants; every task has a probe no placeholder passes; grading twice gives the same scores;
no line's verdict on the solution, a mutant or a stub changes with the seed (every line under 1,500 seeds, kept
in the course, <assignment folder>/sweep-record.json, and swept again only for a task whose key changed)."""



COURSE_HELP = ("the course folder (default: the nearest course at or above the working folder: a folder with "
               "registry.py, or one holding course/registry.py)")


def add_verbs(verb) -> None:
    """Register the release verbs; ``verb(name, help, description, examples)`` makes one subparser."""
    answers = verb("answers", "print the answer keys of the course's questions assignments", ANSWERS_HELP, ANSWERS_EXAMPLES)
    answers.add_argument("--course", help=COURSE_HELP)
    answers.add_argument("--only", help="one assignment (default: every questions assignment)")
    answers.add_argument("--variant", metavar="EMAIL", help="one student's key: their Gradescope email or SID "
                         "(questions with parameters give each student their own numbers)")
    answers.set_defaults(run=_answers)

    build = verb("build", "build student notebooks, solutions and autograder zips, then check them", BUILD_HELP,
                 BUILD_EXAMPLES)
    build.add_argument("--out", help="folder to write assignments/, solutions/, autograder/ into (default: the folder holding the course)")
    build.add_argument("--course", help=COURSE_HELP)
    build.add_argument("--only", help="build one assignment of the registry")
    build.add_argument("--runner", choices=["cpu", "gpu"], default="cpu", help="Gradescope runner the zip targets (default: cpu)")
    build.add_argument("--pdf", action="store_true", help="export a PDF with submissions (needs LaTeX on students' machines)")
    build.add_argument("--otter-zip", action="store_true",
                       help="also write autograder/<name>-otter-autograder.zip, otter's own (fixed inputs, no sandbox: docs/instructors.md)")
    build.add_argument("--no-check", action="store_true", help="skip `attn-ref check` (not for a release)")
    build.add_argument("--verbose", action="store_true", help="with an error, also its traceback")
    build.set_defaults(run=_build)

    check = verb("check", "prove a release: solution full, blank 0, public checks, mutants, determinism",
                 CHECK_DESCRIPTION, CHECK_EXAMPLES)
    check.add_argument("zips", nargs="*", help="autograder zips (default: every zip under RELEASE/autograder)")
    check.add_argument("--release", help="the folder holding assignments/, solutions/, autograder/ (default: the folder holding the course)")
    check.add_argument("--course", help=COURSE_HELP)
    check.add_argument("--sweep-seeds", type=int, default=None, metavar="N",
                       help="sweep every line under N seeds, with no record (default: every line under 1500, which "
                            "sees a verdict flipping under one seed in 500 with 95%% confidence, kept in "
                            "the course (<assignment folder>/sweep-record.json) and swept again for a task whose key "
                            "changed)")
    check.set_defaults(run=_check)

    new = verb("new", "start an assignment, a function task or a numeric question from a template", NEW_HELP, NEW_EXAMPLES)
    new.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment's name (made, with its registry line, if new)")
    unit = new.add_mutually_exclusive_group()
    unit.add_argument("--task", metavar="NAME", help="add a function task NAME (a unit folder)")
    unit.add_argument("--question", metavar="NAME", help="add a numeric question NAME (a unit folder)")
    new.add_argument("--function", metavar="NAME", help="the task's function (default: the task's name)")
    new.add_argument("--title", help="a new assignment's title, in the registry and intro.md (default: its name)")
    new.add_argument("--course", help=COURSE_HELP + "; where there is none, ./course, made here")
    new.set_defaults(run=_new)

    reqs = verb("requirements", "print the lock of the students' or the grader's environment",
                REQUIREMENTS_HELP, REQUIREMENTS_EXAMPLES)
    reqs.add_argument("environment", choices=["student", "grader"], help="whose environment")
    reqs.add_argument("--ranges", action="store_true", help="the ranges of pyproject.toml, not the lock")
    reqs.set_defaults(run=_requirements)

    lock = verb("lock", "resolve the environments into exact pins for every platform (locks/*.txt)", LOCK_HELP, LOCK_EXAMPLES)
    lock.set_defaults(run=_lock)

