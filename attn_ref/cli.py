"""attn-ref: a thin command line over the package's Python API (one module per verb)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def repo_root() -> Path:
    """The repository root when running from a checkout (where pyproject.toml sits), else the current folder."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() else Path.cwd()


def _course(args) -> Path:
    return Path(args.course).resolve() if args.course else repo_root() / "course"


def _answers(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from .release.course import CourseError, load_course

    try:
        assignments = [a for a in load_course(_course(args), args.only) if a.kind == "questions"]
    except CourseError as err:
        print(f"attn-ref answers: {err}", file=sys.stderr)
        return 2
    for assignment in assignments:
        table = Table(title=f"{assignment.name}: answer key (computed in {assignment.folder.name}/<question>/question.py)")
        table.add_column("variable")
        table.add_column("value", justify="right")
        for answer in (a for q in assignment.units for a in q.answers):
            value = answer.expected
            table.add_row(answer.name, f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value))
        Console().print(table)
    return 0


def _print_rows(rows, title: str) -> bool:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in ("assignment", "check", "result", "detail"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.assignment, row.check, "[green]ok[/green]" if row.ok else "[red]FAILED[/red]", row.detail)
    Console(width=160).print(table)
    return all(row.ok for row in rows)


def _build(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from .release.build import BuildError, build
    from .release.check import check_release
    from .release.course import CourseError, load_course

    console = Console()
    out = Path(args.out).resolve() if args.out else repo_root()
    failures: list = []

    def verify(staged: Path, built) -> None:
        rows = check_release(staged, _course(args), [b.autograder for b in built])
        if not _print_rows(rows, "attn-ref check (on the staged release)"):
            failures.extend(r for r in rows if not r.ok)
            raise BuildError("the release failed its checks; nothing was moved into place")

    try:
        load_course(_course(args), args.only)  # a bad course or --only: say so before any work
        with console.status("building (otter assign, executing solutions, checking)..."):
            built = build(out, _course(args), only=args.only, runner=args.runner, pdf=args.pdf,
                          verify=None if args.no_check else verify)
    except CourseError as err:
        print(f"attn-ref build: {err}", file=sys.stderr)
        return 2
    except BuildError as err:
        print(f"attn-ref build: {err}", file=sys.stderr)
        return 1
    table = Table(title=f"attn-ref build -> {out}")
    for column in ("assignment", "otter assign s", "solution run s", "total s"):
        table.add_column(column)
    for b in built:
        table.add_row(b.name, f"{b.seconds_otter_assign:.1f}", f"{b.seconds_solution:.1f}", f"{b.seconds_total:.1f}")
    console.print(table)
    for b in built:
        for path in (b.student, b.solution, b.autograder):
            console.print(f"  {path.relative_to(out)}")
        for warning in b.warnings:
            console.print(f"[yellow]warning ({b.name}):[/yellow] {warning}")
    return 0


def _check(args) -> int:
    from .release.check import check_release

    release = Path(args.release).resolve() if args.release else repo_root()
    rows = check_release(release, _course(args), [Path(z) for z in args.zips] or None)
    return 0 if _print_rows(rows, f"attn-ref check ({release})") else 1


def _probe_mutants(args) -> int:
    import json

    from .grade.mutants import probe_mutants

    mutants = json.loads(Path(args.mutants).read_text())
    verdicts = probe_mutants(args.notebook, args.autograder, mutants)
    Path(args.out).write_text(json.dumps(verdicts))
    return 0


def _probe_evidence(args) -> int:
    import json

    from .grade.autograder import load_autograder
    from .grade.scoring.evidence import CHECK_SEEDS, tasks_without_evidence

    missing = tasks_without_evidence(load_autograder(args.autograder), CHECK_SEEDS)
    Path(args.out).write_text(json.dumps({"seeds": len(CHECK_SEEDS), "missing": missing}))
    return 0


def _grade(args) -> int:
    from .grade import AutograderError, SandboxError
    from .grade.classroom.cluster import ClusterError
    from .grade.cli import run_grade

    try:
        return run_grade(args)
    except (AutograderError, SandboxError, ClusterError) as err:
        print(f"attn-ref grade: {err}", file=sys.stderr)
        return 2


def _requirements(args) -> int:
    from .release.build import GRADER_PACKAGES, STUDENT_PACKAGES, requirements

    print(requirements(STUDENT_PACKAGES if args.environment == "student" else GRADER_PACKAGES), end="")
    return 0


# Each verb's --help: what it does (description) and how it is typed (epilog, kept as written).
ANSWERS_HELP = """Print the answer key of every "questions" assignment of the course: each answer variable and the
value its question.py computes with attn_ref (the numbers the hidden checks compare with)."""
ANSWERS_EXAMPLES = """examples:
  attn-ref answers                      # every questions assignment of course/
  attn-ref answers --only practice      # one assignment
  attn-ref answers --course tests/fixtures/stats_course
"""

BUILD_HELP = """Build every assignment of the course into a staging folder, run `attn-ref check` on it, and only then
move assignments/, solutions/ and autograder/ into place (a failed build changes nothing)."""
BUILD_EXAMPLES = """examples:
  attn-ref build                              # into this checkout, as `make release` does
  attn-ref build --out /tmp/release --only lab
  attn-ref build --runner gpu --pdf           # <name>-autograder-gpu.zip; the export also makes otter's PDF
"""

CHECK_EXAMPLES = """examples:
  attn-ref check                                       # the release in this checkout, every zip
  attn-ref check --release /tmp/release
  attn-ref check autograder/lab-autograder.zip
"""

PROBE_MUTANTS_HELP = """Used by `attn-ref check`, through the zip's own bundled grader: run a notebook (the solution) once in a
graded kernel, put each mutant of MUTANTS (JSON: {task: [[label, source], ...]}) in place of the student's
function, run the task's hidden probes, and write {"mutants": {task: {label: {probe: passed}}}} to OUT."""
PROBE_MUTANTS_EXAMPLES = """example:
  attn-ref probe-mutants solutions/lab/lab.ipynb --autograder autograder/lab-autograder.zip \\
      --mutants mutants.json --out verdicts.json
"""

PROBE_EVIDENCE_HELP = """Used by `attn-ref check`, through the zip's own bundled grader: for each task of the autograder, under
the check's sampled seeds, whether some probe no placeholder passes (zeros, uniform weights, an input
returned, ...) exists; writes {"seeds": N, "missing": {task: seeds without one}} to OUT."""
PROBE_EVIDENCE_EXAMPLES = """example:
  attn-ref probe-evidence --autograder autograder/lab-autograder.zip --out evidence.json
"""

REQUIREMENTS_HELP = """Print the project's pinned requirements of one environment, as pip reads them: the students' (numpy,
torch, otter, matplotlib: what graded kernels run in) or the grader's (no torch)."""
REQUIREMENTS_EXAMPLES = """examples:
  attn-ref requirements student > requirements.txt && pip install -r requirements.txt
  attn-ref requirements grader
"""

GRADE_HELP = """Grade submissions against an autograder zip, the way Gradescope would, without Docker."""
GRADE_EXAMPLES = """examples:
  one notebook:     attn-ref grade submission.ipynb --autograder autograder/lab-autograder.zip
  a class:          attn-ref grade submissions/ --autograder autograder/lab-autograder.zip --out graded/
  Gradescope's "Export Submissions" zip:
                    attn-ref grade export.zip --autograder autograder/lab-autograder.zip --out graded/
  a class on a Dask cluster (TLS: see the README):
                    attn-ref grade submissions/ --autograder autograder/lab-autograder.zip --cluster tls://scheduler:8786
  on Gradescope (run_autograder does this):
                    attn-ref grade /autograder/submission --autograder /autograder/source --results /autograder/results/results.json
"""


# Static: the autograder zip carries no attn_ref.release, and its `grade` verb builds this same parser.
CHECK_DESCRIPTION = """attn-ref check: a release proves itself before anyone uploads it.

For each autograder zip, through the zip's own bundled grader and the students' environment: the solution
scores full and the blank notebook 0 (as root, also through the zip's run_autograder); the solution agrees
with every answer key; every public check passes on the solution; every hidden probe is failed by at least
one of its task's mutants; every task has a probe no placeholder passes; grading twice gives the same scores."""


def _formatter(prog: str) -> argparse.HelpFormatter:
    """Descriptions and examples printed as written (their line breaks are the layout), 110 columns wide."""
    return argparse.RawDescriptionHelpFormatter(prog, width=110)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attn-ref", description=__doc__, formatter_class=_formatter,
                                     epilog="example:\n  attn-ref build && attn-ref grade --help")
    verbs = parser.add_subparsers(dest="verb", required=True)

    def verb(name: str, help: str, description: str, examples: str) -> argparse.ArgumentParser:
        return verbs.add_parser(name, help=help, description=description, epilog=examples, formatter_class=_formatter)

    answers = verb("answers", "print the answer keys of the course's questions assignments", ANSWERS_HELP, ANSWERS_EXAMPLES)
    answers.add_argument("--course", help="the course folder (default: course/ of this checkout)")
    answers.add_argument("--only", help="one assignment (default: every questions assignment)")
    answers.set_defaults(run=_answers)

    build = verb("build", "build student notebooks, solutions and autograder zips, then check them", BUILD_HELP,
                 BUILD_EXAMPLES)
    build.add_argument("--out", help="folder to write assignments/, solutions/, autograder/ into (default: the repo root)")
    build.add_argument("--course", help="the course folder (default: course/ of this checkout)")
    build.add_argument("--only", help="build one assignment of the registry")
    build.add_argument("--runner", choices=["cpu", "gpu"], default="cpu", help="Gradescope runner the zip targets (default: cpu)")
    build.add_argument("--pdf", action="store_true", help="export a PDF with submissions (needs LaTeX on students' machines)")
    build.add_argument("--no-check", action="store_true", help="skip `attn-ref check` (not for a release)")
    build.set_defaults(run=_build)

    check = verb("check", "prove a release: solution full, blank 0, public checks, mutants, determinism",
                 CHECK_DESCRIPTION, CHECK_EXAMPLES)
    check.add_argument("zips", nargs="*", help="autograder zips (default: every zip under RELEASE/autograder)")
    check.add_argument("--release", help="the folder holding assignments/, solutions/, autograder/ (default: the repo root)")
    check.add_argument("--course", help="the course folder (default: course/ of this checkout)")
    check.set_defaults(run=_check)

    mutants = verb("probe-mutants", "which hidden probes each mutant fails (used by check, through the zip's grader)",
                   PROBE_MUTANTS_HELP, PROBE_MUTANTS_EXAMPLES)
    mutants.add_argument("notebook", help="the notebook whose functions the mutants replace (the solution)")
    mutants.add_argument("--autograder", required=True, help="the autograder zip (or its unpacked folder)")
    mutants.add_argument("--mutants", required=True, help="JSON file: {task: [[label, source], ...]}")
    mutants.add_argument("--out", required=True, help="JSON file to write the verdicts to")
    mutants.set_defaults(run=_probe_mutants)

    evidence = verb("probe-evidence", "whether each task has a probe no placeholder passes (used by check)",
                    PROBE_EVIDENCE_HELP, PROBE_EVIDENCE_EXAMPLES)
    evidence.add_argument("--autograder", required=True, help="the autograder zip (or its unpacked folder)")
    evidence.add_argument("--out", required=True, help="JSON file to write the verdict to")
    evidence.set_defaults(run=_probe_evidence)

    reqs = verb("requirements", "print the pinned requirements of the students' or the grader's environment",
                REQUIREMENTS_HELP, REQUIREMENTS_EXAMPLES)
    reqs.add_argument("environment", choices=["student", "grader"], help="whose environment")
    reqs.set_defaults(run=_requirements)

    from .grade.cli import add_grade_arguments

    grade = verb("grade", "grade a submission or a class against an autograder zip", GRADE_HELP, GRADE_EXAMPLES)
    add_grade_arguments(grade)
    grade.set_defaults(run=_grade)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

