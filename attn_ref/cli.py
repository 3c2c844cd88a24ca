"""attn-ref: a thin command line over the package's Python API (one module per verb)."""

from __future__ import annotations

import argparse
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attn-ref", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("answers", help="print the practice answer key").set_defaults(run=_answers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
