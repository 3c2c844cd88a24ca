"""attn-ref: a thin command line over the package's Python API (one module per verb)."""

from __future__ import annotations

import argparse
import os
import sys


def _answers(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from .answers import ANSWERS

    table = Table(title="practice: answer key (attn_ref.answers.ANSWERS)")
    table.add_column("variable")
    table.add_column("value", justify="right")
    for name, value in ANSWERS.items():
        table.add_row(name, f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value))
    Console().print(table)
    return 0


def default_release_dir():
    """The repository root when running from a checkout (where pyproject.toml sits), else the current folder."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() else Path.cwd()


def _build(args) -> int:
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from .release.build import build

    console = Console()
    out = Path(args.out).resolve() if args.out else default_release_dir()
    with console.status("building releases (otter assign, executing solutions)..."):
        built = build(out, only=args.only, runner=args.runner, pdf=args.pdf)
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


def _grade(args) -> int:
    from pathlib import Path

    from .grade import AutograderError, SandboxError, grade
    from .grade.batch import grade_batch, is_batch, summary_lines
    from .grade.core import load_autograder
    from .grade.sandbox import resolve

    from .grade.cleanup import make_undumpable

    if os.geteuid() != 0:
        make_undumpable()  # a kernel running as this user cannot read this process's environment or memory
    limits = dict(cell_timeout=args.cell_timeout, call_timeout=args.call_timeout)
    try:
        plan = resolve(args.autograder, python=args.kernel_python, namespaces=args.namespaces)
        for warning in plan.warnings:
            print(f"attn-ref grade: {warning}", file=sys.stderr)
        if args.results is None and is_batch(Path(args.submission)):
            report = grade_batch(args.submission, args.autograder, args.out, jobs=args.jobs, budget=args.timeout,
                                 force=args.force, plan=plan, progress=sys.stderr.isatty(), **limits)
            if report.interrupted:
                print(f"interrupted: {report.graded} graded — rerun to resume", file=sys.stderr)
                return 130
            print(f"{report.total} submissions: {report.graded} graded, {report.skipped} unchanged since the last run")
            print(f"gradebook: {Path(args.out) / 'grades.csv'}  (kernels: {plan.mode})")
            print("\n".join(summary_lines(report.rows, load_autograder(args.autograder))))
            return 0
        results = grade(args.submission, args.autograder, out_dir=args.out, results_path=args.results,
                        budget=args.timeout, plan=plan, **limits)
    except (AutograderError, SandboxError) as err:
        print(f"attn-ref grade: {err}", file=sys.stderr)
        return 2
    total = sum(t["max_score"] for t in results["tests"])
    print(f"{args.submission}: {results['score']:g} / {total:g} ({results['extra_data'].get('status')}; kernel: {plan.mode})")
    for test in results["tests"]:
        print(f"  {test['name']}: {test['score']:g} / {test['max_score']:g}")
    return 0


def _requirements(args) -> int:
    from .release.build import GRADER_PACKAGES, STUDENT_PACKAGES, requirements

    print(requirements(STUDENT_PACKAGES if args.environment == "student" else GRADER_PACKAGES), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attn-ref", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("answers", help="print the practice answer key").set_defaults(run=_answers)

    build = verbs.add_parser("build", help="build student notebooks, solutions and autograder zips")
    build.add_argument("--out", help="folder to write assignments/, solutions/, autograder/ into (default: the repo root)")
    build.add_argument("--only", choices=["practice", "lab"], help="build one assignment")
    build.add_argument("--runner", choices=["cpu", "gpu"], default="cpu", help="Gradescope runner the zip targets")
    build.add_argument("--pdf", action="store_true", help="export a PDF with submissions (needs LaTeX on students' machines)")
    build.set_defaults(run=_build)

    reqs = verbs.add_parser("requirements", help="print the pinned requirements of the students' or the grader's environment")
    reqs.add_argument("environment", choices=["student", "grader"])
    reqs.set_defaults(run=_requirements)

    grade = verbs.add_parser("grade", help="grade a submission against an autograder zip")
    grade.add_argument("submission", help="a .ipynb or grader.export() zip; a folder of them; or a Gradescope export (zip or folder)")
    grade.add_argument("--autograder", required=True, help="autograder/<name>-autograder.zip (or its unpacked folder)")
    grade.add_argument("--out", default=".", help="results go to OUT/results/<submission>.json")
    grade.add_argument("--results", help="write results to exactly this file instead (Gradescope)")
    grade.add_argument("--timeout", "--budget", type=float, default=480.0, help="seconds for one whole submission (default 8 min)")
    grade.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: every core)")
    grade.add_argument("--force", action="store_true", help="regrade submissions already graded with this autograder")
    grade.add_argument("--cell-timeout", type=float, default=120.0, help="seconds one notebook cell may run")
    grade.add_argument("--call-timeout", type=float, default=30.0, help="seconds one call of a student function may run")
    grade.add_argument("--kernel-python", help="interpreter of the students' environment (default: this one)")
    grade.add_argument("--namespaces", choices=["auto", "require", "off"], default="auto",
                       help="run kernels in bubblewrap namespaces: where they work (auto), always, or never (default: auto)")
    grade.set_defaults(run=_grade)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
