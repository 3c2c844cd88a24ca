"""The instructor's edit loop: how long `attn-ref build --only lab` takes after an edit, with this checkout's code
beside the code of another revision (``--before``, a commit), in one run, each on its own copy of the course.

Run: .venv/bin/python benchmarks/authoring.py --before REV [--scenario same] [--scenario new-out] ...

Scenarios (each a timed build, after one untimed build that warms what the code keeps between builds):
  same      the same course into the same --out: nothing changed
  new-out   the same course into a new --out
  prompt    one task's prompt.md given another sentence
  mutant    one mutant added to c7 (a copy of one of its own, with a comment)
The "before" side runs REV's code (a git worktree) with REV's course and its seed-sweep record where REV kept it
(autograder/lab-autograder-sweep.json beside the release, or the course's folder); each side's record starts as
its revision committed it, so the warm-up build sweeps nothing whole that the revision held. Prints each side's
seconds per scenario and their ratio. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = ("same", "new-out", "prompt", "mutant")
OLD_RECORD = "autograder/lab-autograder-sweep.json"  # where revisions before the course kept it


def _side(code: Path, work: Path) -> tuple[Path, Path]:
    """A copy of ``code``'s course and a release folder holding the record where ``code`` reads it."""
    course = work / "course"
    shutil.copytree(code / "course", course, ignore=shutil.ignore_patterns("__pycache__", ".attn-ref-cache"))
    out = work / "out"
    if (code / OLD_RECORD).is_file():
        (out / "autograder").mkdir(parents=True)
        shutil.copyfile(code / OLD_RECORD, out / OLD_RECORD)
    return course, out


def _build(code: Path, course: Path, out: Path, cache: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(code), ATTN_REF_CACHE=str(cache))
    started = time.monotonic()
    # from the course's folder: `python -m` puts the working folder first on the path, before PYTHONPATH
    done = subprocess.run([sys.executable, "-m", "attn_ref", "build", "--only", "lab", "--course", str(course),
                           "--out", str(out)], env=env, cwd=course.parent, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"the build failed ({code}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return seconds


def _edit(course: Path, scenario: str, out: Path) -> Path:
    """Apply a scenario's edit; the --out the timed build writes into."""
    if scenario == "prompt":
        prompt = course / "lab" / "c3" / "prompt.md"
        prompt.write_text(prompt.read_text() + "\nRead the shapes in the docstring before you start.\n")
    elif scenario == "mutant":
        mutants = sorted((course / "lab" / "c7" / "mutants").glob("*.py"))
        shutil.copyfile(mutants[0], mutants[0].with_name("zz_copy.py"))
        with open(mutants[0].with_name("zz_copy.py"), "a") as f:
            f.write("\n# a copy, for the benchmark\n")
    return out.with_name("out-new") if scenario == "new-out" else out


def run(code: Path, scenario: str, work: Path) -> float:
    course, out = _side(code, work)
    cache = work / "cache"
    _build(code, course, out, cache)  # warm: what the code keeps between builds
    return _build(code, course, _edit(course, scenario, out), cache)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a revision whose code is timed beside this checkout's")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, help="default: every scenario")
    parser.add_argument("--after-only", action="store_true",
                        help="time this checkout alone (the before side of new-out sweeps the lab whole: 15 minutes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attn-ref-authoring-") as tmp:
        tmp = Path(tmp)
        before = tmp / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(before), args.before], check=True,
                       capture_output=True)
        try:
            print(f"{'scenario':10} {'before (' + args.before[:10] + ')':>22} {'after (this checkout)':>22}  ratio")
            for scenario in args.scenario or SCENARIOS:
                sides = (("after", REPO),) if args.after_only else (("before", before), ("after", REPO))
                seconds = {side: run(code, scenario, tmp / f"{scenario}-{side}") for side, code in sides}
                first = f"{seconds['before']:20.1f} s" if "before" in seconds else f"{'(not run)':>22}"
                ratio = f"{seconds['before'] / seconds['after']:5.1f}x" if "before" in seconds else ""
                print(f"{scenario:10} {first} {seconds['after']:20.1f} s  {ratio}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)], capture_output=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
