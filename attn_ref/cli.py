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
    from .grade.evidence import CHECK_SEEDS, tasks_without_evidence

    missing = tasks_without_evidence(load_autograder(args.autograder), CHECK_SEEDS)
    Path(args.out).write_text(json.dumps({"seeds": len(CHECK_SEEDS), "missing": missing}))
    return 0


def _grade(args) -> int:
    from .grade import AutograderError, SandboxError
    from .grade.cli import run_grade
    from .grade.cluster import ClusterError

    try:
        return run_grade(args)
    except (AutograderError, SandboxError, ClusterError) as err:
        print(f"attn-ref grade: {err}", file=sys.stderr)
        return 2


def _requirements(args) -> int:
    from .release.build import GRADER_PACKAGES, STUDENT_PACKAGES, requirements

    print(requirements(STUDENT_PACKAGES if args.environment == "student" else GRADER_PACKAGES), end="")
    return 0


GRADE_HELP = """Grade submissions against an autograder zip, the way Gradescope would, without Docker.

examples:
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
one of its task's mutants; every task has a probe no placeholder passes; grading twice gives the same scores.

example:
  attn-ref check autograder/lab-autograder.zip
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attn-ref", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    defaults = argparse.RawDescriptionHelpFormatter  # every help names its own default

    answers = verbs.add_parser("answers", help="print the answer keys of the course's questions assignments",
                               formatter_class=defaults)
    answers.add_argument("--course", help="the course folder (default: course/ of this checkout)")
    answers.add_argument("--only", help="one assignment")
    answers.set_defaults(run=_answers)

    build = verbs.add_parser("build", help="build student notebooks, solutions and autograder zips, then check them",
                             description="Build every assignment of the course into a staging folder, run `attn-ref "
                             "check` on it, and only then move assignments/, solutions/ and autograder/ into place.",
                             formatter_class=defaults)
    build.add_argument("--out", help="folder to write assignments/, solutions/, autograder/ into (default: the repo root)")
    build.add_argument("--course", help="the course folder (default: course/ of this checkout)")
    build.add_argument("--only", help="build one assignment of the registry")
    build.add_argument("--runner", choices=["cpu", "gpu"], default="cpu", help="Gradescope runner the zip targets (default: cpu)")
    build.add_argument("--pdf", action="store_true", help="export a PDF with submissions (needs LaTeX on students' machines)")
    build.add_argument("--no-check", action="store_true", help="skip `attn-ref check` (not for a release)")
    build.set_defaults(run=_build)

    check = verbs.add_parser("check", help="prove a release: solution full, blank 0, public checks, mutants, determinism",
                             description=CHECK_DESCRIPTION,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("zips", nargs="*", help="autograder zips (default: every zip under RELEASE/autograder)")
    check.add_argument("--release", help="the folder holding assignments/, solutions/, autograder/ (default: the repo root)")
    check.add_argument("--course", help="the course folder (default: course/ of this checkout)")
    check.set_defaults(run=_check)

    mutants = verbs.add_parser("probe-mutants")  # used by check, through the zip's own grader
    mutants.add_argument("notebook")
    mutants.add_argument("--autograder", required=True)
    mutants.add_argument("--mutants", required=True)
    mutants.add_argument("--out", required=True)
    mutants.set_defaults(run=_probe_mutants)

    evidence = verbs.add_parser("probe-evidence")  # used by check, through the zip's own grader
    evidence.add_argument("--autograder", required=True)
    evidence.add_argument("--out", required=True)
    evidence.set_defaults(run=_probe_evidence)

    reqs = verbs.add_parser("requirements", help="print the pinned requirements of the students' or the grader's environment")
    reqs.add_argument("environment", choices=["student", "grader"])
    reqs.set_defaults(run=_requirements)

    from .grade.cli import add_grade_arguments

    grade = verbs.add_parser("grade", help="grade a submission or a class against an autograder zip", description=GRADE_HELP,
                             formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=110))
    add_grade_arguments(grade)
    grade.set_defaults(run=_grade)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

