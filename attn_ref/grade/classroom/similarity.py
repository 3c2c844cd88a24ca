"""Which submissions' code for one unit look alike: copydetect's similarity (MOSS-style winnowing) of every pair
over THRESHOLD, in time near-linear in the class, not quadratic.

Each submission is fingerprinted once (on a pool of processes for a large class); an index of its hashes
(hash -> the submissions that hold it) names the candidates of each submission (a prefix filter, then a count
filter: ``FingerprintIndex.candidates``), and each candidate's share is computed on arrays, the same whole numbers
and division as copydetect's ``compare_files``. copydetect itself compares only the pairs whose marked code is
shown. The pairs, similarities and marks are those of comparing every pair (``tests/similarity_class.py`` holds
that oracle). No hash is ever dropped from the index: the class-wide common ones (``V = V.V(V, V=V, V=True)`` is
in most softmaxes once names are filtered) are read only for the few submissions made of little else, so no pair
over the threshold can be missed. The cost: the fingerprints (linear), then per submission the holders of its
rare hashes (``FingerprintIndex.postings``), then the pairs found.
"""

from __future__ import annotations

import html
import io
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import combinations

import numpy as np

THRESHOLD = 0.75  # the share of a submission's tokens found in another's
NOISE = 25  # copydetect's k: matches shorter than this many characters are noise
GUARANTEE = 30  # matches this long are always found
MIN_CODE = 80  # characters of a submission's own code (starter excluded) below which a unit is not compared
POOL_FROM = 300  # submissions from which fingerprints are taken on several processes
MAX_WORKERS = 4  # processes the similarity may start
CHUNKS = 16  # pieces of a class's fingerprinting: the pool's processes balance their load
CELLS_PER_BLOCK = 1 << 22  # candidates × kept positions checked at once: bounds the memory of one submission's row


def starter_lines(code: str, starter: str) -> list[bool]:
    """For each line of the code, whether it is one of the starter's lines (compared stripped, in order);
    blank lines between two of them (inside a docstring) too."""
    lines = code.split("\n")
    written = [(i, line.strip()) for i, line in enumerate(lines) if line.strip()]
    given = [line.strip() for line in starter.split("\n") if line.strip()]
    found = [False] * len(lines)
    if not given or not written:
        return found
    matcher = SequenceMatcher(None, [text for _, text in written], given, autojunk=False)
    for block in matcher.get_matching_blocks():
        for j in range(block.a, block.a + block.size):
            found[written[j][0]] = True
    for (i, _), (k, _) in zip(written, written[1:]):
        if found[i] and found[k]:
            found[i + 1:k] = [True] * (k - i - 1)
    return found


@dataclass
class UnitCode:
    """A submission's code for one unit, and which of its characters are the starter's lines.

    The starter is excluded by position, not with copydetect's boilerplate hashes: a docstring is one
    token to copydetect, so a starter filters to a few dozen characters, about one k-gram, and every
    k-gram from the signature into the student's body (the docstring inside it) matched and was marked
    in every pair. Nor are the starter's lines cut out before fingerprinting: a student who edits one
    line of a docstring would leave an unterminated string that swallows the whole body."""

    text: str
    given: np.ndarray  # per character of text: part of a starter line

    @classmethod
    def split(cls, text: str, starter: str) -> UnitCode:
        given, pos = np.zeros(len(text), dtype=bool), 0
        for line, is_given in zip(text.split("\n"), starter_lines(text, starter)):
            end = min(pos + len(line) + 1, len(text))  # the line and its newline
            given[pos:end] = is_given
            pos = end
        return cls(text, given)

    @property
    def own(self) -> str:
        """What the student wrote beyond the starter."""
        return "".join(c for c, g in zip(self.text, self.given) if not g)

    def fingerprint(self):
        """copydetect's fingerprint of the code, less every k-gram that touches a starter line (kept out of
        the hashes, their positions and the token count that similarity is a share of)."""
        from copydetect import CodeFingerprint
        from copydetect.utils import get_token_coverage

        fp = CodeFingerprint("unit.py", NOISE, GUARANTEE - NOISE + 1, fp=io.StringIO(self.text), language="python")
        if not self.given.any():
            return fp
        touched = np.concatenate([[0], np.cumsum(self.given)])  # touched[b] - touched[a]: starter chars in [a, b)

        kept = self._clear_of_starter(fp, touched)
        fp.hash_idx = {h: [i for i in idx if kept[i]] for h, idx in fp.hash_idx.items()}
        fp.hash_idx = {h: idx for h, idx in fp.hash_idx.items() if idx}
        fp.hashes = set(fp.hash_idx)
        fp.token_coverage = get_token_coverage(fp.hash_idx, fp.k, len(fp.filtered_code))
        return fp

    def _clear_of_starter(self, fp, touched: np.ndarray) -> np.ndarray:
        """Per position of the filtered code, whether its k-gram is clear of every starter character: the k-gram's
        ends mapped back to the text as copydetect maps its slices (``compare_files``), with a character of margin
        each side (that mapping is approximate)."""
        at = np.arange(len(fp.filtered_code) + fp.k + 1, dtype=np.int64)
        if len(fp.offsets) == 0:
            raw = np.minimum(at, len(self.text))
        else:
            row = np.minimum(np.searchsorted(fp.offsets[:, 0], at), len(fp.offsets) - 1)
            raw = np.clip(at + fp.offsets[row, 1].astype(np.int64), 0, len(self.text))
        start = np.maximum(raw[:len(at) - fp.k] - 1, 0)
        end = np.minimum(raw[fp.k:] + 1, len(self.text))
        return touched[end] - touched[start] == 0

    def marked(self, slices) -> str:
        """The code, escaped: the shared slices in <mark>, the starter's lines dimmed (never marked)."""
        shared = np.zeros(len(self.text), dtype=bool)
        for start, end in zip(*slices):
            shared[max(int(start), 0):max(int(end), 0)] = True
        kind = np.where(self.given, 1, np.where(shared, 2, 0))
        cuts = [0, *(np.flatnonzero(np.diff(kind)) + 1).tolist(), len(self.text)]
        out = []
        for start, end in zip(cuts, cuts[1:]):
            piece = html.escape(self.text[start:end])
            out.append({0: piece, 1: f'<span class="starter">{piece}</span>', 2: f"<mark>{piece}</mark>"}[int(kind[start])])
        return "".join(out)


KGRAM_BASE = np.uint64(1_000_003)


def kgram_hashes(text: str, k: int) -> np.ndarray:
    """The hash of every k-gram of ``text``, the same in every process (a polynomial over its code points,
    modulo 2**64). copydetect's own uses Python's hash() of a str, which is salted per process
    (PYTHONHASHSEED): the report's similarities and marks then differed from one run to the next."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    count = len(codes) - k + 1
    if count <= 0:
        return np.array([], dtype=np.int64)
    hashes = np.zeros(count, dtype=np.uint64)
    for j in range(k):
        hashes = hashes * KGRAM_BASE + codes[j:j + count]  # wraps around: modulo 2**64
    return hashes.view(np.int64)


@dataclass
class Fingerprinted:
    code: UnitCode
    fp: object  # copydetect's CodeFingerprint of the code, the starter's k-grams left out


def fingerprinted(codes: dict[str, str], starter: str) -> dict[str, Fingerprinted]:
    """Each submission's code with its fingerprint, keyed as given; those with too little code of their own left out."""
    import copydetect.utils

    copydetect.utils.hashed_kgrams = kgram_hashes  # its fingerprints, deterministic (kgram_hashes)
    split = {key: UnitCode.split(code, starter) for key, code in codes.items()}
    return {key: Fingerprinted(c, c.fingerprint()) for key, c in split.items() if len(c.own.strip()) >= MIN_CODE}


@dataclass(frozen=True)
class Compact:
    """What the index reads of a fingerprint, as arrays (cheap to send between processes): its distinct hashes,
    sorted; its kept positions, ascending, with the index of each one's hash; its token coverage."""

    hashes: np.ndarray
    positions: np.ndarray
    local: np.ndarray
    coverage: float

    @classmethod
    def of(cls, fp) -> Compact:
        hashes = np.array(sorted(fp.hash_idx), dtype=np.int64)
        local = np.repeat(np.arange(len(hashes)), [len(fp.hash_idx[v]) for v in hashes.tolist()])
        positions = np.concatenate([np.zeros(0, dtype=np.int64), *(np.asarray(fp.hash_idx[v], dtype=np.int64) for v in hashes.tolist())])
        order = np.argsort(positions, kind="stable")
        return cls(hashes, positions[order], local[order].astype(np.int64), float(fp.token_coverage))


def compact_prints(items: list[tuple[str, str]], starter: str) -> list[tuple[str, Compact]]:
    """(key, compact fingerprint) of each (key, code) with enough code of its own: the work a process of the
    pool does (``similar_pairs``)."""
    return [(key, Compact.of(f.fp)) for key, f in fingerprinted(dict(items), starter).items()]


def _compact_class(codes: dict[str, str], starter: str, pool) -> dict[str, Compact]:
    """Every submission's compact fingerprint, on the pool's processes where one is given (in chunks, in order)."""
    items = sorted(codes.items())
    if pool is None:
        return dict(compact_prints(items, starter))
    size = max(1, -(-len(items) // CHUNKS))
    chunks = [items[at:at + size] for at in range(0, len(items), size)]
    try:
        return {key: c for done in pool.map(compact_prints, chunks, [starter] * len(chunks)) for key, c in done}
    except (BrokenProcessPool, OSError):  # the pool could not start or lost a process: the work is done here
        return dict(compact_prints(items, starter))


@contextmanager
def similarity_pool(submissions: int):
    """Processes to fingerprint a class on, one per CPU this process may use (at most MAX_WORKERS), or None (a
    small class, or one CPU). Forked from a fresh server that has imported this module and copydetect once (about
    a second of CPU), never from the TA's process itself, which may hold threads."""
    cpus = min(len(os.sched_getaffinity(0)), MAX_WORKERS)
    if submissions < POOL_FROM or cpus < 2:
        yield None
        return
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, "copydetect"])
    with ProcessPoolExecutor(cpus, mp_context=context) as pool:
        yield pool


def compared(prints: dict[str, Fingerprinted], a: str, b: str, threshold: float) -> tuple | None:
    """(a, b, similarity, marked code a, marked code b) where copydetect's comparison of the two (the larger
    share) reaches the threshold, else None."""
    from copydetect import compare_files

    _, (sim_a, sim_b), (slices_a, slices_b) = compare_files(prints[a].fp, prints[b].fp)
    similarity = float(max(sim_a, sim_b))
    if similarity < threshold:
        return None
    return a, b, similarity, prints[a].code.marked(slices_a), prints[b].code.marked(slices_b)


def most_similar_first(pairs: list[tuple]) -> list[tuple]:
    """Sorted as the report lists them: the most similar first, then by the two keys."""
    return sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))


def _union(positions: np.ndarray, rows: np.ndarray, count: int, k: int) -> np.ndarray:
    """Per row, how many characters the k-grams at its positions cover (positions sorted within each row, rows
    ascending): what copydetect's ``get_copied_slices`` spans in total, and ``get_token_coverage`` counts."""
    same = rows[1:] == rows[:-1]
    gaps = np.minimum(np.diff(positions), k)[same]  # a gap of k or more starts a new slice: it adds k
    return np.bincount(rows[1:][same], weights=gaps, minlength=count) + k * (np.bincount(rows, minlength=count) > 0)


@dataclass
class Row:
    """One submission's hashes ranked from the most common in the class (rank 0) to the rarest, and the prefix
    split: ranks below ``common`` span less than the threshold of it, the rest are ``rare``."""

    own: np.ndarray  # its hash ids
    rank: np.ndarray  # per hash (its local index): its rank
    first_cover: np.ndarray  # per character: the first rank whose k-grams cover it (len(own): none)
    common: int


class FingerprintIndex:
    """The class's fingerprints as arrays, and the index: for each hash, the submissions that hold it."""

    def __init__(self, prints: list[Compact], k: int):
        self.k, self.count = k, len(prints)
        self.coverage = [p.coverage for p in prints]
        flat = np.concatenate([np.zeros(0, dtype=np.int64), *(p.hashes for p in prints)])
        self.starts = np.cumsum([0, *(len(p.hashes) for p in prints)], dtype=np.int64)
        unique, ids = np.unique(flat, return_inverse=True)  # every hash -> an id, 0 .. distinct hashes - 1
        self.ids = ids.astype(np.int64)  # submission i's hash ids: ids[starts[i]:starts[i + 1]]
        owners = np.repeat(np.arange(self.count), np.diff(self.starts))
        order = np.argsort(self.ids, kind="stable")
        self.holders = owners[order]  # hash h's submissions: holders[first[h]:first[h + 1]]
        self.first = np.concatenate([[0], np.cumsum(np.bincount(self.ids, minlength=len(unique)))])
        self.frequency = np.diff(self.first)  # submissions that hold each hash
        self.spots = [(p.positions, p.local) for p in prints]  # per submission: its kept positions, each one's hash
        self.local = np.full(len(unique), -1, dtype=np.int64)  # scratch: a hash id -> its index in one submission

    def _own(self, i: int) -> np.ndarray:
        return self.ids[self.starts[i]:self.starts[i + 1]]

    def _row(self, i: int, threshold: float) -> Row:
        own, (positions, local) = self._own(i), self.spots[i]
        rank = np.empty(len(own), dtype=np.int64)
        rank[np.lexsort((own, -self.frequency[own]))] = np.arange(len(own))  # 0: the most common
        first_cover = np.full(int(positions[-1]) + self.k, len(own), dtype=np.int64)
        np.minimum.at(first_cover, (positions[:, None] + np.arange(self.k)).ravel(), np.repeat(rank[local], self.k))
        spans = np.cumsum(np.bincount(first_cover, minlength=len(own) + 1)[:len(own)])  # spans[r]: ranks 0..r's span
        common = int(np.count_nonzero(spans / self.coverage[i] < threshold))  # spans grow with r: a run from rank 0
        return Row(own, rank, first_cover, common)

    def _beyond_common(self, i: int, row: Row) -> np.ndarray:
        """Per hash of i (its local index): how many characters its k-grams cover that no common hash's do."""
        positions, local = self.spots[i]
        chars = (positions[:, None] + np.arange(self.k)).ravel()
        owner = np.repeat(local, self.k)
        free = (row.first_cover[chars] >= row.common) & (row.rank[owner] >= row.common)
        once = np.unique(owner[free] * len(row.first_cover) + chars[free])  # a character once per hash
        return np.bincount(once // len(row.first_cover), minlength=len(row.own))

    def candidates(self, i: int, threshold: float) -> np.ndarray:
        """Every submission j ≠ i that could hold threshold of i's tokens, in O(the postings of i's rare hashes).

        Lossless. copydetect's share of i found in j (``compare_files``) is the span of the k-grams at i's
        positions whose hashes j holds too, over the span of all of i's kept k-grams (``token_coverage``).

        Prefix filter. Take i's hashes from the most common in the class to the rarest, and let `common` be the
        longest run of them whose own span is under threshold of i's: any j that holds none of the other hashes
        (the rarest, `rare`) shares at most `common`'s span, under threshold. So every j over the threshold holds
        a hash of `rare`, and the index lists it. This is MOSS's "drop the hashes most of the class holds", made
        safe per submission: a common hash is read only for a submission whose rare hashes alone cannot reach
        threshold.

        Count filter. The characters j's shared k-grams cover are among those `common` covers and, for each
        rare hash j holds, those its k-grams cover beyond `common`'s: so j's share is at most
        (span of `common` + the sum of those counts over the rare hashes j holds) / coverage. Where that is
        under threshold (the same float division as copydetect's, of a larger whole number: division is
        monotone, so a tie at the threshold cannot slip through), j is not a candidate."""
        others, bound = self.holders_of_rare(i, threshold)
        return others[bound / self.coverage[i] >= threshold]

    def holders_of_rare(self, i: int, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """Every submission but i that holds one of i's rare hashes (the prefix filter's candidates), and for each,
        the count filter's bound: how many of i's characters its shared k-grams can cover at most."""
        if len(self._own(i)) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        row = self._row(i, threshold)
        rare = np.flatnonzero(row.rank >= row.common)
        lists = [self.holders[self.first[h]:self.first[h + 1]] for h in row.own[rare].tolist()]
        found = np.concatenate([np.zeros(0, dtype=np.int64), *lists])
        weights = np.repeat(self._beyond_common(i, row)[rare].astype(float), [len(held) for held in lists])
        others, at = np.unique(found, return_inverse=True)
        common_span = int(np.count_nonzero(row.first_cover < row.common))
        bound = common_span + np.bincount(at, weights=weights, minlength=len(others))
        return others[others != i], bound[others != i]

    def postings(self, i: int, threshold: float) -> int:
        """How many (hash, submission) entries ``candidates`` reads for i: its cost."""
        if len(self._own(i)) == 0:
            return 0
        row = self._row(i, threshold)
        return int(self.frequency[row.own[row.rank >= row.common]].sum())

    def shares(self, i: int, others: np.ndarray) -> np.ndarray:
        """For each of others, the share of i's tokens it holds too: copydetect's similarity of i in that pair."""
        own, (positions, local) = self._own(i), self.spots[i]
        self.local[own] = np.arange(len(own))
        out = []
        for block in np.array_split(others, max(1, len(others) * len(positions) // CELLS_PER_BLOCK + 1)):
            lengths = self.starts[block + 1] - self.starts[block]
            rows = np.repeat(np.arange(len(block)), lengths)
            at = np.repeat(self.starts[block] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(lengths.sum())
            mine = self.local[self.ids[at]]
            held = np.zeros((len(block), len(own)), dtype=bool)
            held[rows[mine >= 0], mine[mine >= 0]] = True
            row, col = np.nonzero(held[:, local])  # row-major: each row's shared positions in order
            out.append(_union(positions[col], row, len(block), self.k) / self.coverage[i])
        self.local[own] = -1
        return np.concatenate([np.zeros(0), *out])

    def flagged(self, threshold: float) -> dict[tuple[int, int], float]:
        """(i, j), i < j -> the similarity of every pair over the threshold: the larger of its two shares. A share
        under threshold is never needed: where one side is under, the pair's similarity is the other's."""
        best: dict[tuple[int, int], float] = {}
        for i in range(self.count):
            others = self.candidates(i, threshold)
            shares = self.shares(i, others)
            over = shares >= threshold
            for j, share in zip(others[over].tolist(), shares[over].tolist()):
                pair = (min(i, j), max(i, j))
                best[pair] = max(best.get(pair, 0.0), share)
        return best


def flagged_pairs(compact: dict[str, Compact], threshold: float) -> list[tuple[str, str, float]]:
    """(key a, key b, similarity), a < b, of every pair over the threshold. Submissions whose fingerprints are the
    same (the common case for a short function: copydetect reads names as V and drops comments, so one way of
    writing it is one fingerprint, whoever wrote it) are indexed once: a pair's similarity is a function of the
    two fingerprints alone, so each pair of fingerprints is measured once and stands for every pair of their
    submissions, and a fingerprint's own submissions are as similar to each other as it is to itself."""
    groups: dict[tuple[bytes, bytes, bytes], list[str]] = {}
    for key in sorted(compact):
        c = compact[key]
        groups.setdefault((c.hashes.tobytes(), c.positions.tobytes(), c.local.tobytes()), []).append(key)
    members = list(groups.values())  # each sorted, as the keys were
    index = FingerprintIndex([compact[group[0]] for group in members], NOISE)
    found = [(min(a, b), max(a, b), share) for (i, j), share in index.flagged(threshold).items()
             for a in members[i] for b in members[j]]
    for i, group in enumerate(members):
        if len(group) > 1 and len(index.spots[i][0]) and (share := float(index.shares(i, np.array([i]))[0])) >= threshold:
            found += [(a, b, share) for a, b in combinations(group, 2)]
    return found


def similar_pairs(codes: dict[str, str], starter: str, threshold: float = THRESHOLD, marked: int | None = None,
                  pool=None) -> list[tuple]:
    """(key a, key b, similarity, marked code a, marked code b) for every pair whose similarity reaches the
    threshold, most similar first; the starter's lines are neither compared nor marked. Only the first
    ``marked`` pairs (all where None) carry their marked code, from copydetect's own comparison; the rest carry
    None for both. ``pool``: processes to fingerprint on (``similarity_pool``), or None to work here.

    Cost: the class once (fingerprints, on the pool; the index of its distinct fingerprints), then per distinct
    fingerprint its candidates (``FingerprintIndex.candidates``), each checked on arrays (``flagged_pairs``);
    copydetect compares only the pairs it marks."""
    if threshold <= 0:  # every pair reaches it, even one that shares nothing
        prints = fingerprinted(codes, starter)
        return most_similar_first([compared(prints, a, b, threshold) for a, b in combinations(sorted(prints), 2)])
    found = most_similar_first(flagged_pairs(_compact_class(codes, starter, pool), threshold))
    shown = found if marked is None else found[:marked]
    prints = fingerprinted({key: codes[key] for pair in shown for key in pair[:2]}, starter)
    # copydetect's similarity of a pair is the index's (the same whole numbers, the same division): the order stands
    return [compared(prints, a, b, threshold) for a, b, _ in shown] + [(a, b, share, None, None) for a, b, share in found[len(shown):]]
