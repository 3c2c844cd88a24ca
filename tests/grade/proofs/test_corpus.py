"""Seed-stable verdicts, proven on corpora: every correct alternative implementation in
tests/corpus/correct (written from the notebook's prompts alone) scores full under every one of SEEDS
seeds, and every mutant of the course's mutants (course/lab/<task>/mutants/) loses points under every one of
MUTANT_SEEDS, in real kernels. The mutants' lines are swept under far more seeds by `attn-ref check` (100 for
lines with drawn sizes, 20 for the others, through the harness a kernel runs: test_framework.py runs that
check on the lab); here, graded as students are, they lose points under the first few of them too.

Many seeds run in one kernel: the notebook runs once, then the probes run once per seed.
"""

from __future__ import annotations

import ast
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest
from conftest import TESTS, edit_notebook
from course_units import N_SETS, bug_set

from attn_ref.grade.proofs.seeds import grade_under_seeds

SEEDS = list(range(1, 21))
MUTANT_SEEDS = SEEDS[:5]
CORPUS = TESTS / "corpus" / "correct"
FUNCTIONS = {"c1": "softmax", "c2": "additive_attention", "c3": "scaled_dot_product_attention", "c4": "causal_mask",
             "c5": "self_attention", "c6": "decode_with_kv_cache", "c7": "sliding_window_mask", "c8": "rnn_gradient_norm"}


def _top_level_names(source: str) -> set[str]:
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def corpus_groups() -> list[dict[str, Path]]:
    """The corpus packed into notebooks: at most one file per task in each, and no two files in one
    notebook that define the same helper name (a later cell would replace an earlier one's helper, or an
    earlier task's function that a later file redefines for itself)."""
    groups: list[tuple[dict[str, Path], set[str]]] = []
    for task in sorted(FUNCTIONS):
        for path in sorted((CORPUS / task).glob("*.py")):
            names = _top_level_names(path.read_text()) - {FUNCTIONS[task]}
            for files, taken in groups:
                if task not in files and not names & taken:
                    files[task] = path
                    taken |= names | {FUNCTIONS[task]}
                    break
            else:
                groups.append(({task: path}, names | {FUNCTIONS[task]}))
    return [files for files, _ in groups]


GROUPS = corpus_groups()


def test_the_corpus_is_large_enough():
    counts = {task: len(list((CORPUS / task).glob("*.py"))) for task in FUNCTIONS}
    assert all(counts[t] >= 5 for t in ("c1", "c2")), counts
    assert all(counts[t] >= 12 for t in FUNCTIONS if t not in ("c1", "c2")), counts


def _verdicts(release, nb, tmp_path):
    out, _ = release
    path = tmp_path / "lab.ipynb"
    nbformat.write(nb, str(path))
    return grade_under_seeds(path, out / "autograder" / "lab-autograder.zip", SEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("group", range(len(GROUPS)), ids=lambda g: f"notebook{g}")
def test_correct_implementations_score_full_under_every_seed(release, tmp_path, group):
    out, _ = release
    files = GROUPS[group]
    nb = edit_notebook(out / "solutions/lab/lab.ipynb", {f"def {FUNCTIONS[t]}(": p.read_text() for t, p in files.items()})
    per_seed = _verdicts(release, nb, tmp_path)
    failures = [f"seed {seed}, {task} ({files[task].name}): {test['output']}"
                for seed, tests in per_seed.items() for task, test in tests.items()
                if task in files and test["score"] < test["max_score"]]
    assert not failures, "\n".join(failures)
    assert sorted(per_seed) == SEEDS


@pytest.mark.slow
def test_every_mutant_loses_points_under_every_seed(release, tmp_path):
    """Every set of bugs (the k-th mutant of each task) graded under MUTANT_SEEDS, two notebooks at a time, each in a
    process of its own. One test, not one per set: the suite's workers (pytest-xdist) would each grade every
    set again for a fixture they share."""
    out, _ = release
    paths = {}
    for k in range(N_SETS):
        nb = edit_notebook(out / "solutions/lab/lab.ipynb", {marker: source for _, marker, source, _ in bug_set(k).values()})
        paths[k] = tmp_path / f"bugs_{k:02d}.ipynb"
        nbformat.write(nb, str(paths[k]))
    autograder = out / "autograder" / "lab-autograder.zip"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {k: pool.submit(grade_under_seeds, path, autograder, MUTANT_SEEDS) for k, path in paths.items()}
        per_set = {k: future.result() for k, future in futures.items()}
    survived = [f"set {k}, seed {seed}: {task} ({bug_set(k)[task][0]}) kept full marks"
                for k, per_seed in per_set.items() for seed, tests in per_seed.items()
                for task in bug_set(k) if tests[task]["score"] >= tests[task]["max_score"]]
    assert len(per_set) == N_SETS and not survived, "\n".join(survived)


FLOAT32_EVERYWHERE = {  # sound arithmetic, but done in float32 whatever comes in
    "def scaled_dot_product_attention(": '''def scaled_dot_product_attention(q, k, v, mask=None):
    dtype = q.dtype
    q, k, v = q.float(), k.float(), v.float()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return (weights @ v).to(dtype), weights.to(dtype)''',
    "def self_attention(": '''def self_attention(x, W_q, W_k, W_v, causal=True):
    dtype = x.dtype
    x, W_q, W_k, W_v = x.float(), W_q.float(), W_k.float(), W_v.float()
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        T = x.shape[-2]
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).to(dtype), weights.to(dtype)''',
}


@pytest.mark.slow
def test_float32_arithmetic_costs_only_the_precision_probe(release, tmp_path):
    out, _ = release
    nb = edit_notebook(out / "solutions/lab/lab.ipynb", FLOAT32_EVERYWHERE)
    per_seed = _verdicts(release, nb, tmp_path)
    for seed, tests in per_seed.items():
        failed = [line for line in tests["c3"]["output"].splitlines() if line.startswith("✗")]
        assert len(failed) == 1 and "float64 precision kept" in failed[0] and "float32" in failed[0], (seed, failed)
        assert tests["c5"]["score"] == tests["c5"]["max_score"], (seed, tests["c5"]["output"])
