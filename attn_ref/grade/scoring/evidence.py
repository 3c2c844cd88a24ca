"""Points need real evidence: which probes a placeholder also passes, and what a task's lines then earn.

Some probes make the reference's answer trivial on purpose (a single key, a single token, T = 1): there,
code that does none of the task matches too. A *placeholder* is such code's output: a constant (zeros,
ones, uniform weights over the last axis, the identity), an array input returned, its plain mean over the
key axis (what uniform weights give), an input times a weight-matrix input (x @ W: the projection alone),
or, for a number, 0, 1 or a number the call was given. A probe is *evidence* when it compares values
with the reference and no placeholder passes that comparison. Probe inputs are seeded random, so this is
decided per grading, on the inputs actually sent and the reference's outputs: pure NumPy, trusted side.

The rule (``credit``): a line that is not evidence (a placeholder passes it, or it checks a property
alone: a device, rows that sum to 1) earns its points only beside an evidence line of the same task that
passed. Correct work passes every line, so it never loses a point here, as long as every task has an
evidence probe: `attn-ref check` proves that (``tasks_without_evidence``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np

from ..checks_json import FunctionUnit, Probe
from . import comparators as scoring
from .autograder import Autograder
from .inputs import Input, generate, probe_rng, reference_outputs

VALUE_CHECKS = ("matches_reference", "precision_kept")  # comparators that compare values with the reference
PLACEHOLDERS = "zeros, ones, an input returned"  # what a student reads; the full family is above
NOT_CREDITED = (f"passed, but not counted: code that does none of the task ({PLACEHOLDERS}) passes this line "
                "too, so it counts only where one of this task's general cases (random inputs) passes as well")
CHECK_SEEDS = range(20)  # seeds `attn-ref check` samples inputs under, as gradings would


def compares_values(probe: Probe) -> bool:
    return probe.device != "meta" and any(c in VALUE_CHECKS for c in probe.checks)


def _constants(shape: tuple[int, ...]) -> Iterator[np.ndarray]:
    yield np.zeros(shape)
    yield np.ones(shape)  # also an all-True mask
    if shape and shape[-1]:
        yield np.full(shape, 1.0 / shape[-1])  # uniform weights
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        yield np.broadcast_to(np.eye(shape[-1]), shape)  # each query attends to itself alone


def _from_inputs(args: list[Input]) -> list[np.ndarray]:
    """Arrays a placeholder can make without doing the task: each input, each input times a weight
    matrix, and their means over the key axis (with and without that axis, so either output layout fits)."""
    arrays = [a.data for a in args if a.kind == "array"]
    floats = [x.astype(np.float64) for x in arrays if x.dtype.kind == "f"]
    projected = [x @ w for x in floats for w in floats
                 if w is not x and w.ndim == 2 and x.ndim >= 1 and x.shape[-1] == w.shape[0]]
    made = floats + projected
    means = [m.mean(axis=-2, keepdims=keep) for m in made if m.ndim >= 2 and m.shape[-2] for keep in (True, False)]
    return arrays + made + means


def _fitted(arrays: list[np.ndarray], shape: tuple[int, ...]) -> Iterator[np.ndarray]:
    """Those arrays that fit the output's shape as they are or by broadcasting (a row repeated)."""
    for array in arrays:
        try:
            yield np.broadcast_to(array, shape)
        except ValueError:
            continue


def _numbers(args: list[Input]) -> list:
    return [0, 1] + [a.data for a in args if a.kind == "value" and isinstance(a.data, (int, float))]


def placeholder_passes(probe: Probe, args: list[Input], reference: list) -> bool:
    """Whether some placeholder output matches the reference on these inputs, output by output (a stub
    picks each of its outputs freely: the mean of the keys beside uniform weights)."""
    rtol, atol = scoring.tolerance(probe)
    made = None
    for ref in reference:
        if isinstance(ref, np.ndarray) and ref.ndim:  # an array, as _matches_reference compares it
            made = _from_inputs(args) if made is None else made
            candidates = [*_constants(ref.shape), *_fitted(made, ref.shape)]
            if not any(scoring.compare_array("", c, ref, rtol, atol, "", {})[0] for c in candidates):
                return False
        elif not any(scoring.scalar_error(number, float(np.asarray(ref))) <= scoring.scalar_rtol(probe)
                     for number in _numbers(args)):
            return False
    return True


def is_evidence(probe: Probe, args: list[Input], reference: list) -> bool:
    return compares_values(probe) and not placeholder_passes(probe, args, reference)


def credit(lines: list[tuple], evidence: Mapping[int, bool | Callable[[], bool]]) -> list[tuple]:
    """A task's lines (passed, label, points, message) after the rule; ``evidence`` maps a line's index to
    its verdict (a line missing there, one that did not run, is no evidence), or to a function that works it
    out: called only where the verdict matters (a line that passed), at most once, and no more once a passed
    line is evidence (correct work's first general case ends the search)."""
    known: dict[int, bool] = {}

    def proven(i: int) -> bool:
        if i not in known:
            verdict = evidence.get(i, False)
            known[i] = bool(verdict() if callable(verdict) else verdict)
        return known[i]

    if any(ok and proven(i) for i, (ok, *_) in enumerate(lines)):
        return lines
    return [(False, label, points, NOT_CREDITED) if ok and not proven(i) else (ok, label, points, message)
            for i, (ok, label, points, message) in enumerate(lines)]


def _has_evidence(autograder: Autograder, t_index: int, seed: int) -> bool:
    """Whether some probe of the task is evidence on the inputs a grading under ``seed`` sends. CUDA probes
    are left out: a CPU runner skips them."""
    task = autograder.units[t_index]
    reference = autograder.reference(task.reference)
    for p_index, probe in enumerate(task.probes):
        if probe.device == "cuda" or not compares_values(probe):
            continue
        args = generate(probe, probe_rng(seed, t_index, p_index))
        if is_evidence(probe, args, reference_outputs(reference, args)):
            return True
    return False


def tasks_without_evidence(autograder: Autograder, seeds: Iterable[int] = CHECK_SEEDS) -> dict[str, int]:
    """{task: how many of the seeds leave it no evidence probe}, for every task some seed does."""
    seeds = list(seeds)
    missing = {task.name: sum(not _has_evidence(autograder, t_index, seed) for seed in seeds)
               for t_index, task in enumerate(autograder.units) if isinstance(task, FunctionUnit)}
    return {name: count for name, count in missing.items() if count}
