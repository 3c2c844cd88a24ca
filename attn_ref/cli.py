"""attn-ref: a thin command line over the package's Python API (the verbs live beside what they run:
release/cli.py for the instructor's verbs, grade/cli.py and attn_ref/grade/proofs/commands.py for grading)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__


def _grade(args) -> int:
    from .grade.cli import run_grade

    return run_grade(args)


GRADE_HELP = """Grade submissions against an autograder zip, the way Gradescope would, without Docker."""
GRADE_EXAMPLES = """examples:
  one notebook:     attn-ref grade submission.ipynb --autograder autograder/lab-autograder.zip
  a class:          attn-ref grade submissions/ --autograder autograder/lab-autograder.zip --out graded/
  Gradescope's "Export Submissions" zip:
                    attn-ref grade export.zip --autograder autograder/lab-autograder.zip --out graded/
  a class on a Dask cluster (TLS: docs/cluster.md, "Deploying with TLS"):
                    attn-ref grade submissions/ --autograder autograder/lab-autograder.zip --cluster tls://scheduler:8786
  on Gradescope (run_autograder does this):
                    attn-ref grade /autograder/submission --autograder /autograder/source --results /autograder/results/results.json
"""



DESCRIPTION = "attn-ref: build, check and grade the week's assignments (a release for instructors, grading for TAs)."


def _formatter(prog: str) -> argparse.HelpFormatter:
    """Descriptions and examples printed as written (their line breaks are the layout), 110 columns wide."""
    return argparse.RawDescriptionHelpFormatter(prog, width=110)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attn-ref", description=DESCRIPTION, formatter_class=_formatter,
                                     epilog="example:\n  attn-ref build && attn-ref grade --help")
    parser.add_argument("--version", action="version", version=f"attn-ref {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True)

    def verb(name: str, help: str, description: str, examples: str) -> argparse.ArgumentParser:
        return verbs.add_parser(name, help=help, description=description, epilog=examples, formatter_class=_formatter)

    try:  # the autograder zip carries the grader, not the release builder: its parser has the grading verbs only
        from .release.cli import add_verbs as add_release_verbs
    except ModuleNotFoundError as err:
        if not (err.name or "").startswith("attn_ref.release"):
            raise
    else:
        add_release_verbs(verb)
    from .grade.arguments import add_grade_arguments
    from .grade.proofs.commands import add_verbs as add_probe_verbs

    add_probe_verbs(verb)
    grade = verb("grade", "grade a submission or a class against an autograder zip", GRADE_HELP, GRADE_EXAMPLES)
    add_grade_arguments(grade)
    grade.set_defaults(run=_grade)
    return parser


ARGV_ENV = "ATTN_REF_ARGV"  # `attn-ref grade`'s arguments, where it started again without them (below)


def _off_the_command_line(argv: list[str]) -> list[str]:
    """As root, `attn-ref grade`'s command line names the class, the autograder and --out, and without
    namespaces a kernel (another uid) can read every process's command line, though not its environment. So
    the command starts again at once as plain `attn-ref grade`, its arguments in its environment, before it
    starts any kernel; every process it forks then shows that line. Returns the arguments to run."""
    if os.environ.get(ARGV_ENV) is not None and argv == ["grade"]:
        return json.loads(os.environ.pop(ARGV_ENV))  # popped: nothing this process starts inherits them
    if argv[:1] != ["grade"] or len(argv) < 2 or os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return argv
    original = list(getattr(sys, "orig_argv", []))
    prefix = original[: len(original) - len(argv)]
    if not prefix or original[len(prefix):] != argv:  # an embedding interpreter: keep the command as it is
        return argv
    try:
        os.execve(sys.executable, [*prefix, "grade"], {**os.environ, ARGV_ENV: json.dumps(argv)})
    except OSError:  # no interpreter to start again (an embedding one): the files' modes still hold
        return argv


def _said(err: Exception) -> bool:
    """Whether ``err`` is one of the errors the package raises on purpose, whose message says what to fix:
    the grader's (GraderError) or the release's (ReleaseError, where the release builder is installed)."""
    from .grade.inkernel.errors import GraderError

    try:
        from .release.errors import ReleaseError
    except ModuleNotFoundError:  # the autograder zip carries the grader alone
        return isinstance(err, GraderError)
    return isinstance(err, (GraderError, ReleaseError))


def main(argv=None) -> int:
    if argv is None:
        argv = _off_the_command_line(sys.argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except Exception as err:  # caught once, here: each side's base, its message and no traceback
        if not _said(err):
            raise
        print(f"attn-ref {args.verb}: {err}", file=sys.stderr)
        if getattr(args, "verbose", False) and getattr(err, "detail", ""):
            print(err.detail, file=sys.stderr)
        return getattr(err, "exit_code", 2)


if __name__ == "__main__":
    sys.exit(main())

