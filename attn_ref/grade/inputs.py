"""Probe inputs, generated on the trusted side from a seed, and the reference's answers to them.

The seed is a hash of the submission's code and the autograder's version: a regrade of the same
submission gets the same inputs and score, and different submissions get different inputs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

import attn_ref


def seed_for(code_cells: list[str], autograder_version: str) -> int:
    digest = hashlib.sha256(autograder_version.encode())
    for source in code_cells:
        digest.update(b"\0" + source.encode())
    return int.from_bytes(digest.digest()[:8], "little")


@dataclass
class Arg:
    name: str
    kind: str  # "array" | "value" | "device"
    data: object  # np.ndarray as the student receives it (after the dtype cast), or a literal
    keyword: bool
    student_only: bool


def _mask(rng, spec) -> np.ndarray:
    mask = rng.random(spec["mask"]) < spec.get("p", 0.6)
    empty = ~mask.any(axis=-1)  # give every row one key unless it is meant to be empty
    cols = rng.integers(0, mask.shape[-1], size=mask.shape[:-1])
    mask[empty, cols[empty]] = True
    for row in spec.get("empty_rows", []):
        mask[..., row, :] = False
    return mask


def generate(probe: dict, rng: np.random.Generator) -> list[Arg]:
    args = []
    for name, spec in probe["args"]:
        keyword = bool(spec.get("keyword"))
        student_only = bool(spec.get("student_only"))
        if "normal" in spec:
            data = rng.standard_normal(spec["normal"]) * spec.get("scale", 1.0)
            if "common" in spec:  # every row shares a large component along one direction
                direction = rng.standard_normal(spec["normal"][-1])
                data = data + spec["common"] * direction / np.linalg.norm(direction)
            data = data.astype(probe["dtype"])  # the reference sees exactly what the student sees
            args.append(Arg(name, "array", data, keyword, student_only))
        elif "mask" in spec:
            args.append(Arg(name, "array", _mask(rng, spec), keyword, student_only))
        elif "device" in spec:
            args.append(Arg(name, "device", probe["device"], keyword, True))
        else:
            args.append(Arg(name, "value", spec["value"], keyword, student_only))
    return args


def reference_outputs(reference: str, args: list[Arg]) -> list:
    """attn_ref's answer in float64 NumPy, as a list of outputs (arrays or Python scalars)."""
    fn = getattr(attn_ref, reference)
    positional, keywords = [], {}
    for a in args:
        if a.student_only:
            continue
        value = a.data.astype(np.float64) if a.kind == "array" and a.data.dtype.kind == "f" else a.data
        if a.keyword:
            keywords[a.name] = value
        else:
            positional.append(value)
    result = fn(*positional, **keywords)
    return list(result) if isinstance(result, tuple) else [result]
