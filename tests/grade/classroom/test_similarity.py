"""The integrity report's similarity through its index of fingerprints: exactly the pairs, similarities and marks
of copydetect on every pair (the oracle, similarity_class.py), on a class of 200 lab answers (right, wrong,
copied with renames, swapped statements and comments of their own), and copydetect run on those pairs alone."""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest
from copydetect import compare_files
from similarity_class import QUESTIONS, all_pairs_similar, make_class, written_alike

from attn_ref.grade.classroom import similarity
from attn_ref.grade.classroom.similarity import NOISE, Compact, FingerprintIndex, fingerprinted, similar_pairs


@pytest.fixture(scope="module")
def lab():
    return make_class(200, seed=1)


@pytest.mark.parametrize("question", sorted(QUESTIONS))
def test_the_index_finds_exactly_the_pairs_every_pair_finds(lab, question, monkeypatch):
    codes, starter = lab.codes[question], lab.starters[question]
    calls, compared = [], similarity.compared
    monkeypatch.setattr(similarity, "compared", lambda *args: calls.append(args) or compared(*args))
    found = similar_pairs(codes, starter)
    assert found == all_pairs_similar(codes, starter)  # pairs, similarities, marked code: the same tuples, in order
    assert len(calls) == len(found)  # copydetect compares the pairs over the threshold, and no other
    pairs = {(a, b) for a, b, *_ in found}
    planted = [tuple(sorted(p)) for q, *p in lab.copies if q == question]
    assert planted and all(p in pairs for p in planted)
    assert len(pairs) > len(planted)  # honest answers written the same way are alike too: the class is no easy case
    assert any("<mark>" in code for _, _, _, code, _ in found)


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.75, 0.9])
def test_a_submission_over_the_threshold_is_always_a_candidate(lab, threshold):
    """The index's two claims, pair by pair: its share of a submission is copydetect's, and every submission
    holding at least `threshold` of another's is among that one's candidates (whatever the threshold)."""
    prints = fingerprinted(lab.codes["c3"], lab.starters["c3"])
    keys = sorted(prints)[:80]
    index = FingerprintIndex([Compact.of(prints[key].fp) for key in keys], NOISE)
    for i, key in enumerate(keys):
        others = np.array([j for j in range(len(keys)) if j != i])
        theirs = np.array([compare_files(prints[key].fp, prints[keys[j]].fp)[1][0] for j in others], dtype=float)
        assert index.shares(i, others).tolist() == theirs.tolist()
        assert set(others[theirs >= threshold].tolist()) <= set(index.candidates(i, threshold).tolist())


def test_a_class_that_wrote_one_answer_is_every_pair(lab):
    """Hashes the whole class holds are read where a submission holds little else: 30 softmaxes written the
    textbook way, each with its own names and comments, are 435 pairs."""
    codes = written_alike("c1", 30)
    found = similar_pairs(codes, lab.starters["c1"])
    assert len(found) == 435 and found == all_pairs_similar(codes, lab.starters["c1"])


def test_a_tie_at_the_threshold_is_kept(lab):
    codes = dict(sorted(lab.codes["c6"].items())[:60])
    starter = lab.starters["c6"]
    alike = [p for p in all_pairs_similar(codes, starter, threshold=0.5) if p[2] < 1.0]
    at = alike[len(alike) // 2][2]
    for threshold in (at, np.nextafter(at, 1.0)):
        found = similar_pairs(codes, starter, threshold=threshold)
        assert found == all_pairs_similar(codes, starter, threshold=threshold)
        assert (found[-1][2] == at) == (threshold == at)


def test_only_the_pairs_shown_are_marked_and_the_rest_are_the_same(lab, monkeypatch):
    """The report marks the pairs it shows: those carry copydetect's marked code, the rest the same pairs and
    similarities, in the same order, with no code; copydetect compares the marked pairs and no other."""
    codes, starter = lab.codes["c3"], lab.starters["c3"]
    calls, compared = [], similarity.compared
    monkeypatch.setattr(similarity, "compared", lambda *args: calls.append(args) or compared(*args))
    found = similar_pairs(codes, starter, marked=7)
    oracle = all_pairs_similar(codes, starter)
    assert len(oracle) > 7 and found[:7] == oracle[:7] and len(calls) == 7
    assert [p[:3] for p in found] == [p[:3] for p in oracle]
    assert all(p[3] is None and p[4] is None for p in found[7:])


def test_a_pool_of_processes_finds_the_same(lab):
    """The class fingerprinted on a pool of processes (as the report does for a large class): the same results."""
    codes, starter = lab.codes["c1"], lab.starters["c1"]
    with similarity.similarity_pool(similarity.POOL_FROM) as pool:
        if pool is None:
            assert len(os.sched_getaffinity(0)) < 2  # one CPU: no pool, and nothing to compare
            return
        found = similar_pairs(codes, starter, pool=pool)
    assert found == similar_pairs(codes, starter)


def test_the_count_filter_leaves_fewer_candidates_than_the_prefix_alone(lab):
    """Every candidate holds a rare hash (the prefix filter), and some holders of one are not candidates: the
    count filter cut them (it is lossless by the test above)."""
    prints = fingerprinted(lab.codes["c3"], lab.starters["c3"])
    keys = sorted(prints)
    index = FingerprintIndex([Compact.of(prints[key].fp) for key in keys], NOISE)
    candidates = sum(len(index.candidates(i, similarity.THRESHOLD)) for i in range(len(keys)))
    holders = sum(len(index.holders_of_rare(i, similarity.THRESHOLD)[0]) for i in range(len(keys)))
    assert 0 < candidates < 0.9 * holders


def test_a_pool_that_breaks_leaves_the_work_to_this_process(lab):
    class Broken:
        def map(self, *args):
            raise BrokenProcessPool("a process of the pool was killed")

    codes, starter = dict(sorted(lab.codes["c2"].items())[:60]), lab.starters["c2"]
    assert similar_pairs(codes, starter, pool=Broken()) == all_pairs_similar(codes, starter)


SOFTMAX_COPY = '''import numpy as np


def _stable(x, axis):
    return x - x.max(axis=axis, keepdims=True)


def softmax(x, axis=-1):
    """Softmax along axis."""
    e = np.exp(_stable(x, axis))  # shift for stability
    return e / e.sum(axis=axis, keepdims=True)
'''


def _cells(*sources: str):
    import nbformat

    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


EVASIONS = {
    "an alias": SOFTMAX_COPY.replace("def softmax(", "def _x_softmax(") + "\nsoftmax = _x_softmax\n",
    "a 20,000-character comment first": "#" + "x" * 20_000 + "\n" + SOFTMAX_COPY,
    "padding and another docstring": SOFTMAX_COPY.replace('"""Softmax along axis."""', '"""Mine.\n\n\n"""\n\n\n\n'),
    "comments everywhere": "\n".join(line + "  # mine" if line.strip() and not line.startswith(('"', "def")) else line
                                     for line in SOFTMAX_COPY.splitlines()),
}


@pytest.mark.parametrize("how", sorted(EVASIONS))
def test_the_code_compared_is_what_the_graded_name_is_bound_to(how):
    """A verbatim copy hidden by an alias, a comment first in its cell (the cap was applied before comments went),
    padding or comments: the code compared is the copy's, helper included."""
    from attn_ref.grade.checks_json import FunctionUnit
    from attn_ref.grade.classroom.graded_code import unit_code

    unit = FunctionUnit("c1", function="softmax")
    original = unit_code(_cells(SOFTMAX_COPY), unit)
    assert "_stable" in original and "Softmax along" not in original and "#" not in original
    assert unit_code(_cells(EVASIONS[how]), unit) == original


def test_reordered_cells_and_a_later_definition_change_nothing_but_what_runs():
    from attn_ref.grade.checks_json import FunctionUnit
    from attn_ref.grade.classroom.graded_code import unit_code

    unit = FunctionUnit("c1", function="softmax")
    helper, main = SOFTMAX_COPY.split("\n\n\ndef softmax")
    original = unit_code(_cells(SOFTMAX_COPY), unit)
    assert unit_code(_cells("def softmax" + main, helper), unit) == original  # the helper defined after: it runs so
    overridden = unit_code(_cells(SOFTMAX_COPY, "def softmax(x, axis=-1):\n    return x"), unit)
    assert overridden == "def softmax(x, axis=-1):\n    return x"  # the last definition is the graded one


@pytest.mark.parametrize("question", ["c1", "c3"])
def test_a_class_written_in_a_few_ways_finds_exactly_what_every_pair_finds(question):
    """Most of the class alike (one question in 3 ways, copies planted): each distinct fingerprint is indexed
    once, and the pairs, similarities and marked code are every pair's, in order."""
    from similarity_class import in_styles

    lab = in_styles(question, 120, styles=3, seed=2)
    codes, starter = lab.codes[question], lab.starters[question]
    found = similar_pairs(codes, starter)
    assert found == all_pairs_similar(codes, starter)
    assert len(found) > 120 * 119 / 2 / 4  # most pairs are alike: the case the grouping is for
    pairs = {(a, b) for a, b, *_ in found}
    assert all(tuple(sorted(p)) in pairs for _, *p in lab.copies)
