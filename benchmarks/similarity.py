"""What the integrity report's similarity costs: the index of fingerprints (attn_ref/grade/classroom/similarity.py)
against copydetect on every pair, as the report measured before, on a synthetic lab class
(tests/similarity_class.py: c1, c2, c3 and c6 answered in several ways, wrong ones among them, and planted
copies with renamed variables, swapped statements and comments of their own).

Run: .venv/bin/python benchmarks/similarity.py [--n 2000] [--seed 0] [--cpus 0,1] [--old-max 500] [--sample 20000]
[--check 250]. Pins itself (and the pool of processes it fingerprints on, one per CPU) to --cpus. As the report calls
it: the 50 most similar pairs of a question marked. Per question and in total: the index's time (wall, and the
CPU time of this process and its pool: where the machine is shared, wall time counts others' work); every pair's
time, in full where n <= --old-max, else estimated from --sample random pairs (plus the fingerprints, timed
in full), and the ratio; the pairs found; what the index read (postings: the (hash, submission) entries of each
submission's rare hashes), the candidates it checked on arrays, both as a share of all pairs and per pair found;
the planted copies found; the memory the index and its candidate rows take (tracemalloc's peak, in a pass of its
own); and a check on a random sample of --check submissions: every pair's method on the sample gives the same
pairs, similarities and marked code as the index on the sample, and the same pairs and similarities as the index
on the whole class restricted to the sample. Exits 1 where the index's pairs differ from every pair's (in full, or
on the sample) or a planted copy is missed.

With --styles K: one question (--question, c3) written by --n students in K ways (tests/similarity_class.py's
in_styles: most pairs alike, as a class's short functions are), the report's similarity (the pairs it lists, how many
pass the threshold, every planted copy) now against the code before it indexed each distinct fingerprint once (every
submission indexed), both in this run: wall and CPU seconds, pairs, and whether the two found the same pairs.
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
from similarity_class import all_pairs_similar, in_styles, make_class  # noqa: E402

from attn_ref.grade.classroom.similarity import (  # noqa: E402
    NOISE,
    THRESHOLD,
    Compact,
    FingerprintIndex,
    _compact_class,
    compared,
    fingerprinted,
    most_similar_first,
    similar_pairs,
    similarity_pool,
)

MARKED = 50  # the pairs the report shows per question (report.PAIRS_PER_UNIT)


def cpu_seconds() -> float:
    """CPU seconds of this process and of every process under it, live or ended: the similarity's pool is forked
    from a server process, so its workers are not this process's children (psutil reads them)."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:  # ended between the listing and the reading
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


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


def index_pass(prints: dict) -> tuple[int, int, int]:
    """What similar_pairs does before copydetect marks: how many postings the index reads, how many (submission,
    candidate) rows it checks on arrays, and the peak memory that takes (tracemalloc, bytes)."""
    tracemalloc.start()
    index = FingerprintIndex([Compact.of(prints[key].fp) for key in sorted(prints)], NOISE)
    rows = postings = 0
    for i in range(len(prints)):
        others = index.candidates(i, THRESHOLD)
        index.shares(i, others)
        rows += len(others)
        postings += index.postings(i, THRESHOLD)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return postings, rows, peak


def indexed(codes: dict, starter: str, n: int) -> tuple[list, float, float]:
    """similar_pairs as the report runs it, with its own pool (shut down at the end, so that its CPU time counts)."""
    cpu, start = cpu_seconds(), time.perf_counter()
    with similarity_pool(n) as pool:
        found = similar_pairs(codes, starter, marked=MARKED, pool=pool)
    return found, time.perf_counter() - start, cpu_seconds() - cpu


def same_on_a_sample(codes: dict, starter: str, found: list, size: int, rng: random.Random) -> bool:
    """Every pair's method on a random sample of the class: the same tuples (pairs, similarities, marked code) as
    the index on the sample, and the same pairs and similarities as the index on the whole class there."""
    sample = set(rng.sample(sorted(codes), min(size, len(codes))))
    oracle = all_pairs_similar({k: codes[k] for k in sample}, starter)
    on_sample = similar_pairs({k: codes[k] for k in sample}, starter)
    in_class = [(a, b, s) for a, b, s, *_ in found if a in sample and b in sample]
    return oracle == on_sample and [(a, b, s) for a, b, s, *_ in oracle] == in_class


def every_submission_indexed(codes: dict, starter: str, pool) -> list[tuple]:
    """similar_pairs as it was before distinct fingerprints were indexed once (every submission in the index)."""
    compact = _compact_class(codes, starter, pool)
    keys = sorted(compact)
    found = most_similar_first([(keys[i], keys[j], share) for (i, j), share in
                                FingerprintIndex([compact[key] for key in keys], NOISE).flagged(THRESHOLD).items()])
    prints = fingerprinted({key: codes[key] for pair in found[:MARKED] for key in pair[:2]}, starter)
    return [compared(prints, a, b, THRESHOLD) for a, b, _ in found[:MARKED]] + [(a, b, s, None, None) for a, b, s in found[MARKED:]]


def styles(args) -> bool:
    """The report's similarity on one question written in --styles ways, before and now; whether both agree."""
    lab = in_styles(args.question, args.n, args.styles, args.seed)
    codes, starter = lab.codes[args.question], lab.starters[args.question]
    similar_pairs(dict(list(codes.items())[:20]), starter)  # imports, outside the timings
    rows = {}
    for label, run in (("before: every submission indexed", every_submission_indexed), ("now", similar_pairs)):
        cpu, start = cpu_seconds(), time.perf_counter()
        with similarity_pool(args.n) as pool:
            found = run(codes, starter, pool) if run is every_submission_indexed else run(codes, starter, marked=MARKED, pool=pool)
        rows[label] = (found, time.perf_counter() - start, cpu_seconds() - cpu)
    planted = [tuple(sorted(p)) for _, *p in lab.copies]
    print(f"{args.n} submissions of {args.question} in {args.styles} styles, {len(planted)} planted copies, threshold "
          f"{THRESHOLD:.0%}, cpus {args.cpus} (seconds)")
    for label, (found, wall, cpu) in rows.items():
        pairs = {(a, b) for a, b, *_ in found}
        print(f"  {label:34} wall {wall:6.2f}  cpu {cpu:6.2f}  pairs over the threshold {len(found):7d}  listed "
              f"{min(MARKED, len(found))}  planted copies found {sum(p in pairs for p in planted)} of {len(planted)}")
    (before, *_), (now, *_) = rows.values()
    same = [p[:3] for p in before] == [p[:3] for p in now] and before[:MARKED] == now[:MARKED]
    print(f"  the same pairs, similarities and marked code: {same}")
    return same and all(p in {(a, b) for a, b, *_ in now} for p in planted)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpus", default="0,1")
    parser.add_argument("--old-max", type=int, default=500)
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--check", type=int, default=250)
    parser.add_argument("--styles", type=int, help="one question written in this many ways (see above)")
    parser.add_argument("--question", default="c3")
    args = parser.parse_args()
    os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})
    if args.styles:
        sys.exit(0 if styles(args) else 1)
    lab = make_class(args.n, args.seed)
    warm = {q: dict(list(codes.items())[:20]) for q, codes in lab.codes.items()}
    for q in warm:  # imports and pygments' lexer, outside every timing
        similar_pairs(warm[q], lab.starters[q])
    full = args.n <= args.old_max
    print(f"{args.n} submissions, questions {', '.join(lab.codes)}, threshold {THRESHOLD:.0%}, cpus {args.cpus}; every pair "
          + ("measured in full" if full else f"estimated from {args.sample} pairs") + " (seconds)")
    totals, failed, rng = [0.0, 0.0, 0.0], False, random.Random(args.seed)
    for q, codes in lab.codes.items():
        found, new, cpu = indexed(codes, lab.starters[q], args.n)
        prints, fingerprints = timed(fingerprinted, codes, lab.starters[q])
        if full:
            oracle, old = timed(all_pairs_similar, codes, lab.starters[q])
            same = oracle[:MARKED] == found[:MARKED] and [p[:3] for p in oracle] == [p[:3] for p in found]
        else:
            old = estimated_all_pairs(prints, fingerprints, args.sample, rng)
            same = same_on_a_sample(codes, lab.starters[q], found, args.check, rng)
        failed |= not same
        pairs = {(a, b) for a, b, *_ in found}
        planted = [tuple(sorted(p)) for question, *p in lab.copies if question == q]
        missed = [p for p in planted if p not in pairs]
        failed |= bool(missed)
        postings, rows, peak = index_pass(prints)
        every = len(prints) * (len(prints) - 1)  # ordered pairs: a row of candidates is one submission's
        print(f"  {q}: index {new:6.2f} (cpu {cpu:5.2f})  every pair {old:7.2f}  ({old / new:5.1f}×)  pairs {len(found):6d} "
              f"({2 * len(found) / every:.2%} of all)  postings {postings:8d}  candidates {rows:7d} ({rows / every:.1%} of all, "
              f"{rows / max(1, 2 * len(found)):.1f} per pair found)  index memory {peak / 2**20:5.1f} MB  "
              f"planted copies found {len(planted) - len(missed)} of {len(planted)}  "
              + (f"same pairs as every pair: {same}" if full else f"same on a sample of {args.check}: {same}"))
        totals = [totals[0] + new, totals[1] + old, totals[2] + cpu]
    print(f"  total: index {totals[0]:.2f} (cpu {totals[2]:.2f}), every pair {totals[1]:.2f} ({totals[1] / totals[0]:.1f}×)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
