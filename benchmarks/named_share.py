"""The named share on a corpus of buggy notebooks: of the submissions whose bugged task loses points, how
many hear their mistake in words, named by a declared mutant (a "what to check" hint does not count).

Run: .venv/bin/python benchmarks/named_share.py CORPUS_DIR --manifest CSV --autograder ZIP [--out DIR]
[--jobs 2] [--graded DIR] [--judged CSV]

CSV (the corpus's manifest): notebook, split, task, bug (one sentence: what the notebook gets wrong). Only the
rows of notebooks in CORPUS_DIR are read; the others are skipped unread. The folder is graded with
`attn-ref grade CORPUS_DIR --autograder ZIP --out DIR --jobs N` (or, with --graded DIR, an earlier grading's
results are read as they are). Prints, per notebook: its task, the task's failed lines and the mistake each
was named as, beside the bug sentence, so a reader judges whether a name is false (it tells another mistake
than the one the notebook makes). --judged CSV (notebook, verdict: "false" for a false name) adds the
false-name count. Then: failing submissions, named, the share, and failures on other tasks. Asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from attn_ref.grade.inkernel.text import plain_text
from attn_ref.grade.results import Results


@dataclass(frozen=True)
class Case:
    notebook: str
    task: str
    bug: str


@dataclass(frozen=True)
class Graded:
    case: Case
    failed: list[tuple[str, str]]  # the bugged task's failed lines: (line, mistake named or "")
    elsewhere: list[str]  # failed lines of other tasks ("task: line")
    error: str = ""

    @property
    def failing(self) -> bool:
        return bool(self.failed)

    @property
    def names(self) -> list[str]:
        return sorted({m for _, m in self.failed if m})


def cases(corpus: Path, manifest: Path) -> list[Case]:
    """The manifest's rows for the notebooks in ``corpus`` (the others are not kept)."""
    present = {p.name for p in corpus.glob("*.ipynb")}
    with manifest.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("notebook") in present]
    missing = [r for r in ("notebook", "task", "bug") if rows and r not in rows[0]]
    if missing:
        raise SystemExit(f"{manifest}: no column {', '.join(missing)}")
    return [Case(r["notebook"], r["task"], r["bug"]) for r in sorted(rows, key=lambda r: r["notebook"])]


def grade(corpus: Path, autograder: Path, out: Path, jobs: int) -> None:
    done = subprocess.run([sys.executable, "-m", "attn_ref", "grade", str(corpus), "--autograder", str(autograder),
                           "--out", str(out), "--jobs", str(jobs)], capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: some submission lost points, which is the point here
        raise SystemExit(f"attn-ref grade failed ({done.returncode}): {done.stderr[-800:]}")


def read(case: Case, results_dir: Path) -> Graded:
    path = results_dir / f"{Path(case.notebook).stem}.json"
    try:
        results = Results.load(json.loads(path.read_text()), str(path))
    except (OSError, ValueError) as err:
        return Graded(case, [], [], f"no results: {type(err).__name__}: {err}")
    failed, elsewhere = [], []
    for line in results.probes:
        if line.passed is not False:
            continue
        if line.task == case.task:
            failed.append((line.probe or "?", line.mistake or ""))
        else:
            elsewhere.append(f"{line.task}: {line.probe}")
    return Graded(case, failed, elsewhere)


def judged(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    with path.open(newline="") as f:
        return {r[0]: r[1].strip() for r in csv.reader(f) if len(r) >= 2}


def show(graded: list[Graded], verdicts: dict[str, str]) -> None:
    for g in graded:
        state = "ERROR" if g.error else ("named" if g.names else "unnamed") if g.failing else "passes"
        print(f"== {g.case.notebook} [{g.case.task}] {state}{' (judged: ' + verdicts[g.case.notebook] + ')' if g.case.notebook in verdicts else ''}")
        print(f"   bug:    {plain_text(g.case.bug)}")
        if g.error:
            print(f"   {plain_text(g.error)}")
        for line, mistake in g.failed:
            print(f"   failed: {plain_text(line)}")
            print(f"           -> {plain_text(mistake) if mistake else '(no mistake named)'}")
        if g.elsewhere:
            print(f"   other tasks failed: {plain_text('; '.join(g.elsewhere))}")


def summary(graded: list[Graded], verdicts: dict[str, str]) -> None:
    failing = [g for g in graded if g.failing]
    named = [g for g in failing if g.names]
    share = len(named) / len(failing) if failing else 0.0
    print(f"\nnotebooks {len(graded)}; bugged task failing {len(failing)}; named by a mutant {len(named)} "
          f"({share:.0%}); bug not caught {sum(not g.failing and not g.error for g in graded)}; "
          f"not graded {sum(bool(g.error) for g in graded)}")
    named_lines = sum(1 for g in failing for _, m in g.failed if m)
    false = [g.case.notebook for g in named if verdicts.get(g.case.notebook) == "false"]
    if verdicts:
        print(f"false names (judged): {len(false)} of {len(named)} named submissions ({named_lines} named lines): "
              + (", ".join(false) or "none"))
    by_task: dict[str, list[int]] = {}
    for g in failing:
        by_task.setdefault(g.case.task, [0, 0])[0] += 1
        by_task[g.case.task][1] += bool(g.names)
    print("per task (named/failing): " + ", ".join(f"{t} {n}/{f}" for t, (f, n) in sorted(by_task.items())))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--autograder", type=Path, help="the lab's autograder zip (not needed with --graded)")
    parser.add_argument("--out", type=Path, help="the grading's --out (default: a temporary folder)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--graded", type=Path, help="an earlier grading's --out folder: read, not graded again")
    parser.add_argument("--judged", type=Path, help="CSV: notebook, verdict ('false' marks a false name)")
    args = parser.parse_args()
    found = cases(args.corpus, args.manifest)
    if not found:
        raise SystemExit(f"{args.manifest} has no row for a notebook in {args.corpus}")
    out = args.graded
    if out is None:
        if args.autograder is None:
            raise SystemExit("--autograder ZIP is needed to grade (or --graded DIR to read a grading)")
        out = args.out or Path(tempfile.mkdtemp(prefix="named-share-"))
        grade(args.corpus, args.autograder, out, args.jobs)
    verdicts = judged(args.judged)
    graded = [read(c, out / "results") for c in found]
    show(graded, verdicts)
    summary(graded, verdicts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
