"""Trusted scoring: plain data from the kernel against the answer key and attn_ref, with the contract's
type rules and tolerances. Pure functions of data; no student code, no torch."""

from __future__ import annotations

import io
import math
import os
import stat

import numpy as np

FLOAT_RTOL = 5e-3  # contract: three significant figures pass
# (dtype, device) -> (rtol, atol) against the float64 reference
TOLERANCES = {"float64": (1e-7, 1e-9), "float32": (1e-5, 1e-5), "float32-cuda": (1e-4, 1e-4)}


# ---- practice answers ------------------------------------------------------------------------

def _describe_type(obs: dict) -> str:
    return {"missing": "nothing (not assigned)", "ellipsis": "... (still the placeholder)"}.get(obs["t"], obs["t"])


def _as_int(obs: dict):
    if obs["t"] == "int":
        return obs["v"]
    if obs["t"] == "float" and math.isfinite(obs["v"]) and float(obs["v"]).is_integer():
        return int(obs["v"])
    return None


def check_answer(kind: str, expected, obs: dict) -> tuple[bool, str]:
    """(passed, message) for one answer variable; messages never reveal the expected value."""
    if kind == "int":
        got = _as_int(obs)
        if got is None:
            return False, f"expected a whole number, got {_describe_type(obs)}"
        return (got == expected), ("" if got == expected else "not the right count")
    if kind == "float":
        if obs["t"] not in ("int", "float") or not math.isfinite(obs["v"]):
            return False, f"expected a number, got {_describe_type(obs)}"
        ok = math.isclose(obs["v"], expected, rel_tol=FLOAT_RTOL)
        return ok, "" if ok else "not within 0.5% of the answer (keep three significant figures)"
    if kind == "bool":
        if obs["t"] != "bool":
            return False, f"expected True or False, got {_describe_type(obs)}"
        return obs["v"] == expected, "" if obs["v"] == expected else "not the right answer"
    if kind == "choice":
        if obs["t"] != "str":
            return False, f"expected one letter as a string, got {_describe_type(obs)}"
        ok = obs["v"].strip().upper() == expected.upper()
        return ok, "" if ok else "not the right choice"
    if kind == "int_dict":
        if obs["t"] != "dict":
            return False, f"expected a dict, got {_describe_type(obs)}"
        got = {}
        for key, val in obs["v"]:
            k = _as_int(key) if key["t"] != "str" else (int(key["v"]) if key["v"].strip().isdigit() else None)
            got[k] = _as_int(val)
        want = {int(k): v for k, v in expected}
        if set(got) != set(want):
            return False, "the keys should be the ints " + ", ".join(str(k) for k in sorted(want))
        wrong = sorted(k for k in want if got[k] != want[k])
        return not wrong, "" if not wrong else "wrong count for T = " + ", ".join(map(str, wrong))
    raise ValueError(f"unknown answer kind {kind!r}")


# ---- lab probes -------------------------------------------------------------------------------

REPLY_LIMIT = 256 << 20  # no reply from the kernel is larger than this


def read_reply(path, limit: int = REPLY_LIMIT) -> bytes:
    """Bytes of a file the kernel wrote: a regular file (no symlink to /dev/zero or root's files), bounded."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise ValueError("not a plain file of reasonable size")
        return f.read(limit + 1)[:limit]


class Observation:
    """What the kernel reported for one call: its meta JSON and a loader for the arrays it saved."""

    def __init__(self, meta: dict, folder):
        self.meta, self.folder = meta, folder

    def array(self, desc: dict) -> np.ndarray:
        name = str(desc["file"])
        if "/" in name or name.startswith("."):
            raise ValueError("a reply named a file outside its folder")
        return np.load(io.BytesIO(read_reply(self.folder / name)), allow_pickle=False)


def _where(diff: np.ndarray) -> str:
    index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    return f"max |diff| {float(diff.max()):.2e} at index {tuple(int(i) for i in index)}"


def _output_value(desc: dict, obs: Observation):
    """A student output as a NumPy array (or None for a non-array), plus an error message."""
    if desc["kind"] == "scalar":
        v = desc["value"]
        if v["t"] in ("int", "float", "bool"):
            return np.asarray(v["v"]), ""
        return None, f"returned {v['t']}, not a number"
    if desc["kind"] in ("tensor", "ndarray"):
        if "file" not in desc:
            return None, f"a {desc['device']} tensor has no values to compare"
        return obs.array(desc), ""
    return None, f"returned {desc.get('type', 'an unsupported object')}"


def check_probe(task: dict, probe: dict, sent: list, reference: list | None, obs: Observation,
                stats: dict | None = None) -> tuple[bool, str]:
    """(passed, message) for one probe; ``stats`` receives the largest difference from the reference."""
    meta = obs.meta
    if not meta.get("ok"):
        return False, meta.get("error", "the call failed")
    names = task["outputs"]
    outputs = meta["outputs"]
    if len(names) == 1 and meta["returned"] == "tuple":
        return False, f"returned {len(outputs)} values; expected one ({names[0]})"
    if len(names) > 1 and (meta["returned"] != "tuple" or len(outputs) < len(names)):
        return False, f"expected a tuple ({', '.join(names)})"
    outputs = outputs[: len(names)]
    for check in probe["checks"]:
        ok, message = CHECKS[check](task=task, probe=probe, sent=sent, reference=reference, outputs=outputs,
                                    names=names, obs=obs, stats=stats if stats is not None else {})
        if not ok:
            return False, message
    return True, ""


def _kind_ok(task, desc, name):
    want = "tensor" if task["framework"] == "torch" else "ndarray"
    if desc["kind"] == "scalar" or desc["kind"] == want:
        return True, ""
    got = {"tensor": "a torch tensor", "ndarray": "a NumPy array"}.get(desc["kind"], desc.get("type", "something else"))
    return False, f"{name} is {got}; expected {'a torch tensor' if want == 'tensor' else 'a NumPy array'}"


def _matches_reference(task, probe, reference, outputs, names, obs, stats, **_):
    for name, desc, ref in zip(names, outputs, reference):
        ref = np.asarray(ref)
        ok, message = _kind_ok(task, desc, name) if ref.ndim else (True, "")
        if not ok:
            return ok, message
        got, message = _output_value(desc, obs)
        if got is None:
            return False, f"{name}: {message}"
        if got.shape != ref.shape:
            return False, f"{name} has shape {tuple(got.shape)}; expected {tuple(ref.shape)}"
        if ref.dtype == bool:
            wrong = got.astype(bool) != ref
            if wrong.any():
                return False, f"{name}: {int(wrong.sum())} entries differ from the reference"
            continue
        got = got.astype(np.float64)
        if not np.isfinite(got).all():
            return False, f"{name} contains NaN or inf"
        key = probe["dtype"] + ("-cuda" if probe["device"] == "cuda" and probe["dtype"] == "float32" else "")
        rtol, atol = TOLERANCES[key]
        rtol, atol = probe["options"].get("rtol", rtol), probe["options"].get("atol", atol)
        diff = np.abs(got - ref)
        stats["max_error"] = max(stats.get("max_error", 0.0), float(diff.max()) if diff.size else 0.0)
        if not np.all(diff <= atol + rtol * np.abs(ref)):
            return False, f"{name} differs from the reference: {_where(diff)}"
    return True, ""


def _finite(outputs, names, obs, **_):
    for name, desc in zip(names, outputs):
        got, message = _output_value(desc, obs)
        if got is None:
            return False, f"{name}: {message}"
        if got.dtype.kind == "f" and not np.isfinite(got).all():
            return False, f"{name} contains NaN or inf"
    return True, ""


def _dtype_kept(probe, outputs, names, **_):
    for name, desc in zip(names, outputs):
        if desc["kind"] != "scalar" and desc["dtype"] != probe["dtype"]:
            return False, f"{name} is {desc['dtype']}; {probe['dtype']} in should give {probe['dtype']} out"
    return True, ""


def _device_kept(probe, outputs, names, **_):
    for name, desc in zip(names, outputs):
        if desc["kind"] != "tensor":
            return False, f"{name} is not a tensor"
        if desc["device"] != probe["device"]:
            return False, f"{name} is on {desc['device']}; inputs were on {probe['device']} (build tensors on the inputs' device)"
    return True, ""


def _bool_dtype(outputs, names, **_):
    for name, desc in zip(names, outputs):
        if desc.get("dtype") != "bool":
            return False, f"{name} has dtype {desc.get('dtype', desc['kind'])}; expected bool"
    return True, ""


def _weights(names, outputs, obs):
    index = names.index("weights")
    return _output_value(outputs[index], obs)


def _rows_sum_to_one(names, outputs, obs, **_):
    weights, message = _weights(names, outputs, obs)
    if weights is None:
        return False, f"weights: {message}"
    if (weights < 0).any():
        return False, "some weights are negative"
    diff = np.abs(weights.astype(np.float64).sum(axis=-1) - 1.0)
    return bool((diff <= 1e-6).all()), f"weights do not sum to 1: {_where(diff)}"


def _masked_weights_zero(names, outputs, obs, sent, **_):
    weights, message = _weights(names, outputs, obs)
    if weights is None:
        return False, f"weights: {message}"
    mask = next(a.data for a in sent if a.name == "mask")
    masked = ~np.broadcast_to(mask, weights.shape)
    leaked = np.abs(weights[masked])
    ok = not leaked.size or leaked.max() == 0
    return ok, "" if ok else f"{int((leaked > 0).sum())} masked positions got non-zero weight (mask before the softmax)"


def _inputs_unchanged(sent, obs, **_):
    arrays = [a for a in sent if a.kind == "array"]
    for a, desc in zip(arrays, obs.meta.get("inputs_after", [])):
        if not np.array_equal(obs.array(desc), a.data):
            return False, f"the input {a.name} was modified in place"
    return True, ""


def _projected_once(probe, sent, obs, **_):
    x = next(a.data for a in sent if a.name == "x")
    tokens = x.size // x.shape[-1]
    rows = obs.meta.get("projected_rows", {})
    for name in probe["options"]["count_projections"]:
        if rows.get(name, 0) == 0:
            return False, f"could not see {name} used in a matrix product"
        if rows[name] > tokens:
            return False, f"{rows[name]} rows went through {name} for {tokens} tokens: past tokens were projected again"
    return True, ""


CHECKS = {
    "matches_reference": _matches_reference,
    "finite": _finite,
    "dtype_kept": _dtype_kept,
    "device_kept": _device_kept,
    "bool_dtype": _bool_dtype,
    "rows_sum_to_one": _rows_sum_to_one,
    "masked_weights_zero": _masked_weights_zero,
    "inputs_unchanged": _inputs_unchanged,
    "projected_once": _projected_once,
}
