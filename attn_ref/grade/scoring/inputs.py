"""Probe inputs, generated on the trusted side from a seed, and the reference's answers to them.

Each argument's spec names one generator of GENERATORS (the schema is in attn_ref/grade/checks_json.py). The seed
is a hash of the submission's code and the autograder's seed key: a regrade of the same submission gets
the same inputs and score, different submissions get different inputs, and a grader edit that leaves
the probes alone does not change them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..checks_json import GENERATOR_NAMES, Probe


def seed_for(code_cells: list[str], seed_key: str) -> int:
    digest = hashlib.sha256(seed_key.encode())
    for source in code_cells:
        digest.update(b"\0" + source.encode())
    return int.from_bytes(digest.digest()[:8], "little")


@dataclass
class Input:
    """One argument as generated for a call (the typed spec it comes from is checks.Arg)."""

    name: str
    kind: str  # "array" | "value" | "device"
    data: object  # np.ndarray as the student receives it (after the dtype cast), or a literal
    keyword: bool
    student_only: bool


def _normal(rng: np.random.Generator, spec: Mapping, probe: Probe) -> np.ndarray:
    data = rng.standard_normal(spec["normal"]) * spec.get("scale", 1.0)
    if "common" in spec:  # every row shares a large component along one direction
        direction = rng.standard_normal(spec["normal"][-1])
        data = data + spec["common"] * direction / np.linalg.norm(direction)
    return data.astype(probe.dtype)  # the reference sees exactly what the student sees


def _mask(rng: np.random.Generator, spec: Mapping, probe: Probe) -> np.ndarray:
    mask = rng.random(spec["mask"]) < spec.get("p", 0.6)
    empty = ~mask.any(axis=-1)  # give every row one key unless it is meant to be empty
    cols = rng.integers(0, mask.shape[-1], size=mask.shape[:-1])
    mask[empty, cols[empty]] = True
    for row in spec.get("empty_rows", []):
        mask[..., row, :] = False
    return mask


def _ones(rng: np.random.Generator, spec: Mapping, probe: Probe) -> np.ndarray:
    return np.ones(spec["ones"], dtype=probe.dtype)


def _simplex(rng: np.random.Generator, spec: Mapping, probe: Probe) -> np.ndarray:
    shape = spec["simplex"]
    rows = rng.dirichlet(np.ones(shape[-1]), size=tuple(shape[:-1]))
    return rows.reshape(shape).astype(probe.dtype)


ARRAYS: dict[str, Callable] = {"normal": _normal, "mask": _mask, "ones": _ones, "simplex": _simplex}
GENERATORS = (*ARRAYS, "value", "device")
assert GENERATORS == GENERATOR_NAMES  # checks_json.py types each spec by these names


DRAWN = ("normal", "mask", "simplex")  # the generators that read the probe's random generator (ones does not)


def seed_free(probe: Probe) -> bool:
    """Whether the probe's inputs are the same under every seed: no size drawn, no array drawn (values, ones, a
    device). A deterministic implementation's verdict on such a line is then the same under every seed."""
    return "dims" not in probe.options and all(a.generator not in DRAWN for a in probe.args)


def probe_rng(seed: int, t_index: int, p_index: int) -> np.random.Generator:
    """The generator of one probe's inputs: a grading's seed, the task's and the probe's places."""
    return np.random.default_rng([seed, t_index, p_index])


def draw_dims(probe: Probe, rng: np.random.Generator) -> dict[str, int]:
    """The probe's named sizes (options "dims": {name: [low, high]}, inclusive), drawn from its generator; the
    names of each group of options "distinct" get different sizes (T_q ≠ T_k: a mutant that swaps them shows)."""
    dims = probe.options.get("dims", {})
    groups = [tuple(group) for group in probe.options.get("distinct", ())]
    while True:
        sizes = {name: int(rng.integers(low, high + 1)) for name, (low, high) in sorted(dims.items())}
        if all(len({sizes[n] for n in group}) == len(group) for group in groups):
            return sizes


def _sized(params: Mapping, generator: str, sizes: dict[str, int]) -> Mapping:
    """A spec with the names in its shape replaced by the drawn sizes."""
    shape = params[generator]
    if not any(isinstance(n, str) for n in shape):
        return params
    return {**params, generator: [sizes[n] if isinstance(n, str) else n for n in shape]}


def generate(probe: Probe, rng: np.random.Generator) -> list[Input]:
    args = []
    sizes = draw_dims(probe, rng) if "dims" in probe.options else {}
    for a in probe.args:
        if a.generator in ARRAYS:
            params = _sized(a.params, a.generator, sizes)
            args.append(Input(a.name, "array", ARRAYS[a.generator](rng, params, probe), a.keyword, a.student_only))
        elif a.generator == "device":
            args.append(Input(a.name, "device", probe.device, a.keyword, True))
        else:
            args.append(Input(a.name, "value", a.params["value"], a.keyword, a.student_only))
    return args


def reference_outputs(reference: Callable, args: list[Input]) -> list:
    """The reference's answer in float64 NumPy, as a list of outputs (arrays or Python scalars). It gets copies
    of every array: a reference that writes into its mask would change the inputs the student is then given."""
    positional, keywords = [], {}
    for a in args:
        if a.student_only:
            continue
        value = a.data.astype(np.float64) if a.kind == "array" and a.data.dtype.kind == "f" else a.data
        value = value.copy() if a.kind == "array" else value
        if a.keyword:
            keywords[a.name] = value
        else:
            positional.append(value)
    result = reference(*positional, **keywords)
    return list(result) if isinstance(result, tuple) else [result]
