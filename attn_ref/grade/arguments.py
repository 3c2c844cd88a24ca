"""`attn-ref grade`'s options, apart from what runs them (grade/cli.py), so that building the command line loads
nothing of grading: the probe verbs `attn-ref check` runs through a zip's grader load only what they use (the
seed-sweep record's key names those files, release/sweep_record.py)."""

from __future__ import annotations

import argparse

from . import settings

DEFAULT_OUT = "graded"


def add_grade_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submission", help="a .ipynb or grader.export() zip; a folder of them; or a Gradescope export (zip or folder)")
    parser.add_argument("--autograder", required=True, help="autograder/<name>-autograder.zip (or its unpacked folder)")
    parser.add_argument("--out", help=f"write OUT/results/<submission>.json and, for a class, the gradebook (default: {DEFAULT_OUT}/); "
                        "a class's OUT/adjustments.csv (the TAs' changes) is applied on every run, and a row that cannot "
                        "be applied exits 4, with no canvas.csv")
    parser.add_argument("--results", help="write one submission's results to exactly this file (Gradescope's mode: "
                        "a missing or unreadable submission still gets a score-0 results file, exit 0)")
    parser.add_argument("--submitters", help="Gradescope's submission_metadata.json for one submission: its submitters "
                        "decide whose variant of a question with parameters is graded (run_autograder passes it)")
    parser.add_argument("--timeout", "--budget", type=float, default=settings.BUDGET,
                        help=f"seconds for one whole submission (default: {settings.BUDGET:g})")
    parser.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: every core)")
    parser.add_argument("--force", action="store_true", help="regrade submissions already graded with this autograder")
    parser.add_argument("--cell-timeout", type=float, default=settings.CELL_TIMEOUT,
                        help=f"seconds one notebook cell may run (default: {settings.CELL_TIMEOUT:g})")
    parser.add_argument("--call-timeout", type=float, default=settings.CALL_TIMEOUT,
                        help=f"seconds one call of a student function may run (default: {settings.CALL_TIMEOUT:g})")
    parser.add_argument("--kernel-python", help="the students' environment's interpreter (default: the one `make release` made)")
    parser.add_argument("--namespaces", choices=["auto", "require", "off"], default="auto",
                        help="run kernels in bubblewrap namespaces: where they work, always, or never (default: auto)")
    parser.add_argument("--kernel-image", choices=["auto", "off"], default="auto",
                        help="a class: start every kernel from one kernel image that imported numpy and torch once "
                        "(where it keeps kernels apart: as root, or in namespaces), or never (default: auto)")
    parser.add_argument("--cluster", help="grade a class on a Dask cluster: a scheduler's address (tls://host:8786) "
                        "or local:N for N local worker processes (default: --jobs processes here)")
    parser.add_argument("--require-isolation", action="store_true",
                        help="refuse to grade (exit 3) unless kernels run as another uid or in their own namespaces")
    parser.add_argument("--export", choices=["canvas"], help="also write a gradebook import file (a class only)")
    parser.add_argument("--canvas-roster", help="the course's Canvas gradebook export (CSV): its IDs match the rows")
    parser.add_argument("--canvas-assignment", help="the Canvas column to fill, e.g. 'Lab 3.1 (12345)' (default: the assignment's title)")
    parser.add_argument("--canvas-login-domain", help="the domain of the roster's SIS Login IDs when they are user names "
                        "(bob for bob@uni.edu): an email of that domain matches its user part (default: logins match whole emails only)")
