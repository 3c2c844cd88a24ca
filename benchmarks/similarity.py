"""What the integrity report's similarity costs: the index of fingerprints (attn_ref/grade/classroom/similarity.py)
against copydetect on every pair, as the report measured before, on a synthetic lab class
(tests/similarity_class.py: c1, c2, c3 and c6 answered in several ways, wrong ones among them, and planted
copies with renamed variables, swapped statements and comments of their own).

Run: .venv/bin/python benchmarks/similarity.py [--n 2000] [--seed 0] [--cpus 0,1] [--old-max 500] [--sample 20000].
Pins itself to --cpus (it runs in one process). Per question and in total: the index's time (wall, and the
process's CPU time: where the machine is shared, wall time counts others' work); every pair's
time, in full where n <= --old-max, else estimated from --sample random pairs (plus the fingerprints, timed
in full), and the ratio; the pairs found, the candidates the index checked on arrays and all pairs; the planted
copies found; the memory the index and its candidate rows take (tracemalloc's peak, in a pass of its
own). Exits 1 where the index's pairs differ from every pair's (where measured in full) or a planted
copy is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from similarity_class import all_pairs_similar, make_class  # noqa: E402

from attn_ref.grade.classroom.similarity import (  # noqa: E402
    NOISE,
    THRESHOLD,
    FingerprintIndex,
    compared,
    fingerprinted,
    similar_pairs,
)


def timed(run, *args):
    start = time.perf_counter()
    out = run(*args)
    return out, time.perf_counter() - start


def estimated_all_pairs(prints: dict, fingerprints: float, sample: int, rng: random.Random) -> float:
    """Every pair's time: the fingerprints' (timed in full), and the comparisons' from a sample of pairs."""
    keys = sorted(prints)
    pairs = [tuple(rng.sample(keys, 2)) for _ in range(sample)]
    _, compare = timed(lambda: [compared(prints, a, b, THRESHOLD) for a, b in pairs])
    return fingerprints + compare / sample * len(keys) * (len(keys) - 1) / 2


def index_pass(prints: dict) -> tuple[int, int]:
    """What similar_pairs does before copydetect compares: how many (submission, candidate) rows the index checks
    on arrays, and the peak memory that takes (tracemalloc, bytes)."""
    tracemalloc.start()
    index = FingerprintIndex([prints[key].fp for key in sorted(prints)], NOISE)
    rows = 0
    for i in range(len(prints)):
        others = index.candidates(i, THRESHOLD)
        index.shares(i, others)
        rows += len(others)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return rows, peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpus", default="0,1")
    parser.add_argument("--old-max", type=int, default=500)
    parser.add_argument("--sample", type=int, default=20_000)
    args = parser.parse_args()
    os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})
    lab = make_class(args.n, args.seed)
    warm = {q: dict(list(codes.items())[:20]) for q, codes in lab.codes.items()}
    for q in warm:  # imports and pygments' lexer, outside every timing
        similar_pairs(warm[q], lab.starters[q])
    full = args.n <= args.old_max
    print(f"{args.n} submissions, questions {', '.join(lab.codes)}, threshold {THRESHOLD:.0%}, cpus {args.cpus}; every pair "
          + ("measured in full" if full else f"estimated from {args.sample} pairs") + " (seconds)")
    totals, failed, rng = [0.0, 0.0, 0.0], False, random.Random(args.seed)
    for q, codes in lab.codes.items():
        cpu = time.process_time()
        found, new = timed(similar_pairs, codes, lab.starters[q])
        cpu = time.process_time() - cpu
        prints, fingerprints = timed(fingerprinted, codes, lab.starters[q])
        if full:
            oracle, old = timed(all_pairs_similar, codes, lab.starters[q])
            failed |= oracle != found
        else:
            old = estimated_all_pairs(prints, fingerprints, args.sample, rng)
        pairs = {(a, b) for a, b, *_ in found}
        planted = [tuple(sorted(p)) for question, *p in lab.copies if question == q]
        missed = [p for p in planted if p not in pairs]
        failed |= bool(missed)
        rows, peak = index_pass(prints)
        print(f"  {q}: index {new:6.2f} (cpu {cpu:5.2f})  every pair {old:7.2f}  ({old / new:5.1f}×)  pairs {len(found):6d}  "
              f"candidates {rows:7d} of {len(prints) * (len(prints) - 1):8d}  index memory {peak / 2**20:5.1f} MB  "
              f"planted copies found {len(planted) - len(missed)} of {len(planted)}"
              + (f"  (same pairs: {oracle == found})" if full else ""))
        totals = [totals[0] + new, totals[1] + old, totals[2] + cpu]
    print(f"  total: index {totals[0]:.2f} (cpu {totals[2]:.2f}), every pair {totals[1]:.2f} ({totals[1] / totals[0]:.1f}×)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
