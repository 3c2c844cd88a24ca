"""The verbs `attn-ref check` runs through an autograder zip's own bundled grader: probe-mutants, probe-sweep,
probe-seeds and probe-evidence (the zip carries the grader, not the release builder, so they live beside grade/)."""

from __future__ import annotations

import json
from pathlib import Path


def _probe_mutants(args) -> int:
    from .mutants import probe_mutants

    mutants = json.loads(Path(args.mutants).read_text())
    verdicts = probe_mutants(args.notebook, args.autograder, mutants, with_stubs=args.stubs, seeds=args.seeds)
    Path(args.out).write_text(json.dumps(verdicts))
    return 0


def _probe_sweep(args) -> int:
    from .sweep import sweep

    mutants = json.loads(Path(args.mutants).read_text())
    tasks = set(args.tasks.split(",")) if args.tasks else None
    near_tasks = set(args.near_tasks.split(",")) if args.near_tasks else None
    found = sweep(args.autograder, mutants, range(args.first_seed, args.first_seed + args.seeds), tasks=tasks,
                  fixed_seeds=args.fixed_seeds, near_seeds=args.near_seeds, near_tasks=near_tasks,
                  every_line=args.every_line)
    Path(args.out).write_text(json.dumps(found))
    return 0


def _probe_seeds(args) -> int:
    from .seeds import grade_under_seeds

    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    per_seed = grade_under_seeds(args.notebook, args.autograder, seeds)
    Path(args.out).write_text(json.dumps({str(seed): units for seed, units in per_seed.items()}))
    return 0


def _probe_evidence(args) -> int:
    from ..scoring.autograder import load_autograder
    from ..scoring.evidence import CHECK_SEEDS, tasks_without_evidence

    missing = tasks_without_evidence(load_autograder(args.autograder), CHECK_SEEDS)
    Path(args.out).write_text(json.dumps({"seeds": len(CHECK_SEEDS), "missing": missing}))
    return 0


PROBE_MUTANTS_HELP = """Used by `attn-ref check`, through the zip's own bundled grader: run a notebook (the solution) once in a
graded kernel, put each mutant of MUTANTS (JSON: {task: [[label, source], ...]}) in place of the student's
function, grade the task as a submission would be (under seeds 0 .. N-1 with --seeds N), and write
{"mutants": {task: {label: VERDICT}}, "errors": {task: {label: what its cell raised}}, "stubs": {task: {kind:
VERDICT}}} to OUT, VERDICT = {"passed": {probe: seeds passed under}, "seeds", "clean_seeds" (seeds it passed
every probe under), "score" (its best), "max_score", "credited"}. A mutant whose cell raises is not graded.
With --stubs, also the task's derived stubs (zeros, ones, the first argument echoed), each made again for
every probe's inputs."""
PROBE_MUTANTS_EXAMPLES = """example:
  attn-ref probe-mutants solutions/lab/lab.ipynb --autograder autograder/lab-autograder.zip \\
      --mutants mutants.json --out verdicts.json
"""

PROBE_SWEEP_HELP = """Used by `attn-ref check`, through the zip's own bundled grader: every probe line of every function unit,
on the solution (the zip's helpers), every mutant of MUTANTS (JSON: {task: [[label, source], ...]}) and every
derived stub, under seeds FIRST .. FIRST + N - 1, each call made through the kernel's harness in one trusted
process (no notebook kernel: only the instructor's code runs); writes {task: {"lines": {label: {probe:
{"passed", "failed", "named", "misnamed", "pass_seed", "fail_seed", "fail_message", "worst_error", "rtol", "seeds",
"failed_again", "near_its_tolerance"}}},
"broken": {label: what its cell raised}}} to OUT."""
PROBE_SWEEP_EXAMPLES = """example:
  attn-ref probe-sweep --autograder autograder/lab-autograder.zip --mutants mutants.json --seeds 1500 --out sweep.json
"""

PROBE_SEEDS_HELP = """Used by `attn-ref check`, through the zip's own bundled grader: run a notebook (the solution) once in a
graded kernel, then grade its function units as a submission is graded once per seed FIRST .. FIRST + N - 1
(grade_under_seeds); writes {SEED: {unit: its results entry}} to OUT."""
PROBE_SEEDS_EXAMPLES = """example:
  attn-ref probe-seeds solutions/lab/lab.ipynb --autograder autograder/lab-autograder.zip --seeds 20 --out seeds.json
"""

PROBE_EVIDENCE_HELP = """Used by `attn-ref check`, through the zip's own bundled grader: for each task of the autograder, under
the check's sampled seeds, whether some probe no placeholder passes (zeros, uniform weights, an input
returned, ...) exists; writes {"seeds": N, "missing": {task: seeds without one}} to OUT."""
PROBE_EVIDENCE_EXAMPLES = """example:
  attn-ref probe-evidence --autograder autograder/lab-autograder.zip --out evidence.json
"""


def add_verbs(verb) -> None:
    """Register the probe verbs; ``verb(name, help, description, examples)`` makes one subparser."""
    mutants = verb("probe-mutants", "which hidden probes each mutant fails (used by check, through the zip's grader)",
                   PROBE_MUTANTS_HELP, PROBE_MUTANTS_EXAMPLES)
    mutants.add_argument("notebook", help="the notebook whose functions the mutants replace (the solution)")
    mutants.add_argument("--autograder", required=True, help="the autograder zip (or its unpacked folder)")
    mutants.add_argument("--mutants", required=True, help="JSON file: {task: [[label, source], ...]}")
    mutants.add_argument("--out", required=True, help="JSON file to write the verdicts to")
    mutants.add_argument("--stubs", action="store_true", help="also grade every task's derived stubs")
    mutants.add_argument("--seeds", type=int, default=1, help="grade each under seeds 0 .. N-1 (default 1)")
    mutants.set_defaults(run=_probe_mutants)

    swept = verb("probe-sweep", "every line's verdict on the solution, mutants and stubs under many seeds (used by check)",
                 PROBE_SWEEP_HELP, PROBE_SWEEP_EXAMPLES)
    swept.add_argument("--autograder", required=True, help="the autograder zip (or its unpacked folder)")
    swept.add_argument("--mutants", required=True, help="JSON file: {task: [[label, source], ...]}")
    swept.add_argument("--out", required=True, help="JSON file to write the verdicts to")
    swept.add_argument("--seeds", type=int, default=100, help="how many seeds (default 100)")
    swept.add_argument("--fixed-seeds", type=int, default=None, metavar="M",
                       help="lines with fixed sizes under the first M seeds only (default: all N)")
    swept.add_argument("--near-seeds", type=int, default=None, metavar="K",
                       help="then sweep each line whose values came within 10x of its tolerance again, until it has K "
                            "seeds (1500 sees a verdict flipping under one seed in 500 with 95%% confidence)")
    swept.add_argument("--near-tasks", default="", metavar="TASKS",
                       help="the second sweep for these tasks only, comma-separated (default: every task swept)")
    swept.add_argument("--every-line", action="store_true",
                       help="the second sweep takes every line of every implementation to K seeds, not only those near "
                            "their tolerance or with drawn sizes (a seed-free line is called once: its call is exact)")
    swept.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0)")
    swept.add_argument("--tasks", default="", help="only these tasks, comma-separated (default: every one)")
    swept.set_defaults(run=_probe_sweep)

    seeded = verb("probe-seeds", "a notebook's function units graded once per seed, in one kernel (used by check)",
                  PROBE_SEEDS_HELP, PROBE_SEEDS_EXAMPLES)
    seeded.add_argument("notebook", help="the notebook to run once (the solution)")
    seeded.add_argument("--autograder", required=True, help="the autograder zip (or its unpacked folder)")
    seeded.add_argument("--out", required=True, help="JSON file to write the results entries to")
    seeded.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    seeded.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0)")
    seeded.set_defaults(run=_probe_seeds)

    evidence = verb("probe-evidence", "whether each task has a probe no placeholder passes (used by check)",
                    PROBE_EVIDENCE_HELP, PROBE_EVIDENCE_EXAMPLES)
    evidence.add_argument("--autograder", required=True, help="the autograder zip (or its unpacked folder)")
    evidence.add_argument("--out", required=True, help="JSON file to write the verdict to")
    evidence.set_defaults(run=_probe_evidence)

