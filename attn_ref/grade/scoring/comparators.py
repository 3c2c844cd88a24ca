"""Trusted scoring: validated plain data from the kernel against the answer key and attn_ref.

Pure functions of data; no student code, no torch. Messages say what to fix and never give an expected
value: numbers wrong by a factor get a direction and a power of ten, arrays a relative error against the
tolerance, forms the type rules' own words.

The tolerance model (docs/contract.md, "The tolerance model"): an output passes when every entry satisfies
|out − ref| ≤ rtol·|ref| + atol·max|ref|, per tensor, with (rtol, atol) by the probe's dtype and device
(TOLERANCES). Float64 probes are loose enough for float32 rounding of scalar constants and of whole
computations; keeping float64's precision is a separate, named probe ("float64 precision kept") whose
inputs share a large component that float32 cannot hold.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...portable import typerules
from ..checks_json import FunctionUnit, Probe
from ..inkernel.errors import GraderError
from ..inkernel.wire import SAVED_AS, CallReply, Output
from ..isolation.safeio import UnsafeReply, read_kept, read_reply

FLOAT_RTOL = 5e-3  # practice: three significant figures pass
CLOSE_RTOL = 0.05  # a miss this small is likely rounding, and the message says so; a bigger one is the formula
# (dtype, device) -> (rtol, atol); atol is relative to the tensor's largest reference entry
TOLERANCES = {("float64", "cpu"): (1e-5, 1e-5), ("float32", "cpu"): (1e-4, 1e-4), ("float32", "cuda"): (5e-4, 5e-4),
              ("float64", "cuda"): (1e-5, 1e-5)}
SCALAR_RTOL = 1e-5  # a scalar output (c8): float32 autograd over 49 steps drifts ~3e-6; one power off is 10 %


def tolerance(probe: Probe) -> tuple[float, float]:
    rtol, atol = TOLERANCES.get((probe.dtype, "cuda" if probe.device == "cuda" else "cpu"), (1e-5, 1e-5))
    return probe.options.get("rtol", rtol), probe.options.get("atol", atol)


# ---- practice answers ------------------------------------------------------------------------------

def check_answer(kind: str, expected, obs: dict, letters: str = "", mistakes=()) -> tuple[bool, str]:
    """(passed, message) for one answer variable: the form by the type rules, then the value; a wrong value
    that is one of the question's known mistakes is told what that mistake is."""
    ok, message, _ = answer_verdict(kind, expected, obs, letters, mistakes)
    return ok, message


def answer_verdict(kind: str, expected, obs: dict, letters: str = "", mistakes=()) -> tuple[bool, str, str | None]:
    """check_answer's (passed, message) and the known mistake a wrong value is (its words), or None."""
    value, problem = typerules.read(kind, obs, letters)
    if problem:
        return False, problem, None
    ok, message = _answer_value(kind, expected, value)
    if not ok and kind in ("int", "float"):
        for wrong, says in mistakes:
            if value == wrong or (kind == "float" and typerules.relative_difference(value, wrong) <= FLOAT_RTOL):
                return False, says, says
    return ok, message, None


def _answer_value(kind: str, expected, value) -> tuple[bool, str]:
    if kind == "choice":
        return value == str(expected).upper(), "" if value == str(expected).upper() else "not the right choice"
    if kind == "bool":
        return value == expected, "" if value == expected else "not the right answer"
    if kind == "int":
        return value == expected, "" if value == expected else typerules.order_of_magnitude(value, expected)
    if kind == "float":
        ok = typerules.relative_difference(value, expected) <= FLOAT_RTOL
        if ok:
            return True, ""
        close = typerules.relative_difference(value, expected) < CLOSE_RTOL
        return False, typerules.order_of_magnitude(value, expected) + (" (close: keep three significant figures)" if close else "")
    if kind == "int_dict":
        want = {int(k): v for k, v in expected}
        if set(value) != set(want):
            return False, "the keys should be the values of T the question names"
        wrong = sorted(k for k in want if value[k] != want[k])
        return not wrong, "" if not wrong else "wrong count for T = " + ", ".join(map(str, wrong))
    raise ValueError(f"unknown answer kind {kind!r}")


# ---- lab probes ------------------------------------------------------------------------------------

class MalformedOutput(GraderError, ValueError):
    """An array the kernel saved does not match what its reply said."""


@dataclass
class Observation:
    """What the kernel reported for one call, and where it saved its arrays."""

    reply: CallReply
    outbox: Path
    owner: int | None
    loaded: dict = field(default_factory=dict)  # output (its file and description) -> array: read and checked once
    kept: dict | None = None  # the outbox's files, read before it was removed (safeio.keep_reply), if it was

    def array(self, out: Output) -> np.ndarray:
        if out in self.loaded:
            return self.loaded[out]
        try:
            data = read_reply(self.outbox, out.file, owner=self.owner) if self.kept is None else read_kept(self.kept, out.file)
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except (UnsafeReply, OSError, ValueError, TypeError, EOFError, MemoryError, RecursionError) as err:
            raise MalformedOutput(f"its saved values could not be read ({type(err).__name__})") from None
        if (not isinstance(array, np.ndarray) or tuple(array.shape) != out.shape or array.dtype.kind not in "biuf"
                or array.dtype.str[1:] != np.dtype(SAVED_AS.get(out.dtype, out.dtype)).str[1:]):
            raise MalformedOutput("its saved values do not match its description")
        self.loaded[out] = array
        return array


def _value(out: Output, obs: Observation, scalar_kind: str = "scalar"):
    """(array or number, problem) for one output."""
    if out.kind == "scalar":
        value, problem = typerules.read(scalar_kind, out.value)
        return (None, problem) if problem else (value, "")
    if out.kind in ("tensor", "ndarray"):
        if out.file is None:
            return None, f"a tensor on {out.device} has no values to compare"
        return obs.array(out), ""
    return None, f"returned {out.type or 'an unsupported object'}"


def forms_problem(task: FunctionUnit, reply: CallReply) -> str:
    """Why the reply's structure is not what the task returns ("" if it is)."""
    return _forms(task, reply)


NOT_WRITTEN = "returned None: not written yet (replace the ... in its body), or a return is missing"


def _returned_none(reply: CallReply) -> bool:
    """The function returned None: not written yet (a body of ...), or a return left out."""
    return reply.form == "single" and bool(reply.outputs) and reply.outputs[0].kind == "other" and reply.outputs[0].type == "NoneType"


def _forms(task: FunctionUnit, reply: CallReply) -> str:
    """Empty if the reply's structure is what the task returns: the number of values, never truncated."""
    names = task.outputs
    if _returned_none(reply):
        return NOT_WRITTEN
    if len(names) == 1:
        if reply.form != "single":
            return f"returned a {reply.form} of {reply.count} values; expected one value ({names[0]}), not in a tuple"
        return ""
    if reply.form == "single":
        return f"returned one value; expected a tuple ({', '.join(names)})"
    if reply.count != len(names):
        return f"returned {reply.count} values; expected {len(names)} ({', '.join(names)})"
    return ""


def check_probe(task: FunctionUnit, probe: Probe, sent: list, reference: list | None, obs: Observation,
                stats: dict | None = None) -> tuple[bool, str]:
    """(passed, message) for one probe; ``stats`` receives the largest relative error."""
    reply = obs.reply
    if not reply.ok and probe.device == "meta" and reply.meta_values_read:
        # Meta tensors have shapes and devices but no values: code that branches on values (``if w.isnan().any()``)
        # is sound and cannot run there. Not evidence of a device bug; CUDA runners check the device for real.
        return True, ("not checked: the code reads tensor values (an `if` on a tensor, .item()), which meta tensors "
                      "do not have")
    if not reply.ok:
        return False, explained(reply.error)
    problem = _forms(task, reply)
    if problem:
        if _returned_none(reply) and stats is not None:
            stats["not_written"] = True  # the class's report counts these apart from mistakes (mistakes.py)
        return False, problem
    stats = stats if stats is not None else {}
    hints, notes = probe.options.get("hints", {}), []
    for check in probe.checks:
        try:
            ok, message = CHECKS[check](task=task, probe=probe, sent=sent, reference=reference, outputs=reply.outputs,
                                        names=list(task.outputs), obs=obs, stats=stats)
        except MalformedOutput as err:
            return False, str(err)
        if not ok:
            return False, f"{message}; {hints[check]}" if check in hints else message
        if message:
            notes.append(message)
    return True, "; ".join(notes)


# torch's own words for a mistake a student makes, and the sentence that says what to look at
_TORCH_ERRORS = (
    (re.compile(r"on (the )?(expected )?device|same device|device type", re.I),
     "a tensor was made on another device than the inputs: create new tensors with device=<an input>.device"),
    (re.compile(r"expected scalar type|must have the same dtype|dtype .* does not match|expected .*dtype", re.I),
     "tensors of two dtypes met: create new tensors with dtype=<an input>.dtype"),
)


def explained(error: str) -> str:
    """The error the student's function raised, with a sentence on what to look at where torch's is cryptic."""
    for pattern, sentence in _TORCH_ERRORS:
        if pattern.search(error or ""):
            return f"{sentence} ({error})"
    return error


def _kind_ok(task, out: Output, name):
    want = "tensor" if task.framework == "torch" else "ndarray"
    if out.kind == want:
        return True, ""
    got = {"tensor": "a torch tensor", "ndarray": "a NumPy array", "scalar": "a number"}.get(out.kind, out.type or "something else")
    return False, f"{name} is {got}; expected {'a torch tensor' if want == 'tensor' else 'a NumPy array'}"


def _where(index, shape) -> str:
    return f" at index {tuple(int(i) for i in np.unravel_index(index, shape))}" if len(shape) else ""


def compare_array(name: str, got: np.ndarray, ref: np.ndarray, rtol: float, atol: float, label: str,
                  stats: dict) -> tuple[bool, str]:
    """The tolerance model for one tensor; the message gives the relative error, never a value."""
    if got.shape != ref.shape:
        return False, f"{name} has shape {tuple(got.shape)}; expected {tuple(ref.shape)}"
    if ref.dtype == bool:
        wrong = got.astype(bool) != ref
        return (not wrong.any()), f"{name}: {int(wrong.sum())} of {wrong.size} entries are wrong"
    got = got.astype(np.float64)
    if not np.isfinite(got).all():
        return False, f"{name} contains NaN or inf"
    if not ref.size:
        return True, ""
    scale = float(np.abs(ref).max())
    diff = np.abs(got - ref)
    relative = float(diff.max()) / scale if scale else float(diff.max())
    stats["max_error"] = max(stats.get("max_error", 0.0), relative)
    allowed = rtol * np.abs(ref) + atol * scale
    _tolerance_used(stats, float(np.max(np.divide(diff, allowed, out=np.where(diff > 0, np.inf, 0.0), where=allowed > 0))))
    if np.all(diff <= allowed):
        return True, ""
    worst = int(np.argmax(diff - rtol * np.abs(ref)))
    return False, (f"{name} differs from the reference: max |out − ref| / max |ref| = {relative:.0e}{_where(worst, diff.shape)}"
                   f" (allowed: {rtol:.0e}·|ref| + {atol:.0e}·max |ref|, {label})")


def _tolerance_used(stats: dict, ratio: float) -> None:
    """stats["tolerance_used"]: the largest share of its tolerance any compared value took (≤ 1 where every
    value passed; above 1 where a value missed). The seed sweep reads how far a verdict is from tipping."""
    stats["tolerance_used"] = max(stats.get("tolerance_used", 0.0), ratio)


def scalar_error(got, expected: float) -> float:
    """A number's relative difference from a scalar reference (inf for NaN or inf)."""
    return typerules.relative_difference(got, expected) if np.isfinite(float(got)) else float("inf")


def scalar_rtol(probe: Probe) -> float:
    return probe.options.get("rtol", SCALAR_RTOL)


def _matches_reference(task, probe, reference, outputs, names, obs, stats, **_):
    rtol, atol = tolerance(probe)
    label = f"{probe.dtype} on {probe.device}"
    notes: list[str] = []
    for name, out, ref in zip(names, outputs, reference):
        if isinstance(ref, np.ndarray) and ref.ndim:
            ok, message = _kind_ok(task, out, name)
            if not ok:
                return ok, message
            got, problem = _value(out, obs)
            if got is None:
                return False, f"{name}: {problem}"
            ok, message = compare_array(name, np.asarray(got), ref, rtol, atol, label, stats)
            if not ok:
                return ok, message
            continue
        got, problem = _value(out, obs)  # a number: a Python or NumPy number, or a 0-d tensor
        if got is None:
            return False, f"{name}: {problem}"
        if isinstance(got, np.ndarray):
            return False, f"{name} has shape {tuple(got.shape)}; expected a single number (a Python float: use .item())"
        expected = float(np.asarray(ref))
        difference = scalar_error(got, expected)
        stats["max_error"] = max(stats.get("max_error", 0.0), difference)
        _tolerance_used(stats, difference / scalar_rtol(probe))
        if difference > scalar_rtol(probe):
            return False, f"{name} is {_number_off(got, expected, scalar_rtol(probe))}"
        if out.form != "python":
            notes.append(f"{name} was accepted as a {'0-d tensor' if out.form == 'tensor' else 'NumPy number'}, though "
                         "a Python float was asked for (.item() gives one)")
    return True, "; ".join(notes)


def _number_off(got, expected: float, rtol: float) -> str:
    """How a number misses its reference, in words that point at the mistake and never give the value."""
    if float(got) == 0 and expected != 0:
        return "0, and the answer is not (a term that never reaches the result? a graph cut by .detach()?)"
    if expected != 0 and scalar_error(-float(got), expected) <= rtol:
        return "right but for its sign (is an absolute value asked for?)"
    return typerules.order_of_magnitude(got, expected)


def _precision_kept(task, probe, reference, outputs, names, obs, stats, **_):
    ok, message = _matches_reference(task=task, probe=probe, reference=reference, outputs=outputs, names=names,
                                     obs=obs, stats=stats)
    if ok:
        return True, ""
    error = stats.get("max_error")
    if error is None or error > CLOSE_RTOL:  # no values compared (a shape, NaN), or a miss the size of a formula's
        return False, message
    # a miss the size of rounding: float32 internals miss these inputs by 1e-4 to 2e-3, a wrong formula by 0.2 or more
    return False, (message + "; these inputs share a large component, which float32 arithmetic (compute in the inputs'"
                   " dtype; a float32 constant is fine) and a softmax that does not subtract each row's max get wrong")


def _finite(outputs, names, obs, **_):
    for name, out in zip(names, outputs):
        got, problem = _value(out, obs)
        if got is None:
            return False, f"{name}: {problem}"
        if isinstance(got, np.ndarray) and got.dtype.kind == "f" and not np.isfinite(got).all():
            return False, f"{name} contains NaN or inf"
    return True, ""


def _dtype_kept(probe, outputs, names, obs, **_):
    for name, out in zip(names, outputs):
        if out.kind in ("tensor", "ndarray") and out.dtype != probe.dtype:
            return False, f"{name} is {out.dtype}; {probe.dtype} in should give {probe.dtype} out"
        if out.kind in ("tensor", "ndarray") and out.file is not None:
            obs.array(out)  # the values on disk must be of the dtype the reply claims (MalformedOutput if not)
    return True, ""


def _device_kept(probe, outputs, names, reference=None, **_):
    for i, (name, out) in enumerate(zip(names, outputs)):
        if out.kind != "tensor":
            return False, f"{name} is not a tensor"
        if out.device != probe.device:
            return False, f"{name} is on {out.device}; inputs were on {probe.device} (build tensors on the inputs' device)"
        ref = reference[i] if reference is not None and i < len(reference) else None
        if isinstance(ref, np.ndarray) and tuple(out.shape) != ref.shape:
            return False, f"{name} has shape {tuple(out.shape)}; expected {ref.shape}"
    return True, ""


def _bool_dtype(outputs, names, **_):
    for name, out in zip(names, outputs):
        if out.dtype != "bool":
            return False, f"{name} has dtype {out.dtype or out.kind}; expected bool"
    return True, ""


def _weights(names, outputs, obs):
    return _value(outputs[names.index("weights")], obs)


def _rows_sum_to_one(names, outputs, obs, **_):
    weights, problem = _weights(names, outputs, obs)
    if weights is None or not isinstance(weights, np.ndarray):
        return False, f"weights: {problem or 'not an array'}"
    weights = weights.astype(np.float64)
    if not np.isfinite(weights).all():
        return False, "weights contain NaN or inf"
    if (weights < 0).any():
        return False, "some weights are negative"
    diff = np.abs(weights.sum(axis=-1) - 1.0)
    ok = bool((diff <= 1e-6).all())
    return ok, "" if ok else f"weights do not sum to 1 (off by up to {float(diff.max()):.0e})"


def _masked_weights_zero(names, outputs, obs, sent, **_):
    weights, problem = _weights(names, outputs, obs)
    if weights is None or not isinstance(weights, np.ndarray):
        return False, f"weights: {problem or 'not an array'}"
    mask = next(a.data for a in sent if a.name == "mask")
    try:
        masked = ~np.broadcast_to(mask, weights.shape)
    except ValueError:
        return False, f"weights have shape {tuple(weights.shape)}, which the mask does not fit"
    leaked = np.abs(weights[masked])
    ok = not leaked.size or leaked.max() == 0
    return ok, "" if ok else f"{int((leaked > 0).sum())} masked positions got non-zero weight (mask before the softmax)"


def _inputs_unchanged(sent, obs, **_):
    arrays = [a for a in sent if a.kind == "array"]
    after = obs.reply.inputs_after
    if after is None or len(after) != len(arrays):
        return False, "the inputs could not be checked after the call"
    for a, out in zip(arrays, after):
        if out.file is None or not np.array_equal(obs.array(out), a.data):
            return False, f"the input {a.name} was modified in place"
    return True, ""


def _projected_once(probe, sent, obs, **_):
    """Advisory, measured in the kernel, so it can only take points away: more rows projected through a
    weight (or anything made from it) than there are tokens is evidence of re-projection."""
    x = next(a.data for a in sent if a.name == "x")
    tokens = x.size // x.shape[-1]
    rows = obs.reply.projected_rows or {}
    for name in probe.options["count_projections"]:
        count = rows.get(name, 0)
        if count > tokens:
            return False, (f"{count} rows went through {name} for {tokens} tokens: some token was projected more than "
                           "once (each token's projection is computed once, at its step, and kept in the cache)")
    return True, ""


def _autograd_used(obs, **_):
    """Measured in the kernel, so it can only take points away: the task asks for autograd."""
    if obs.reply.autograd_used:
        return True, ""
    return False, "computed without autograd (no backward() or torch.autograd.grad ran); the task asks for autograd"


CHECKS = {
    "matches_reference": _matches_reference,
    "precision_kept": _precision_kept,
    "finite": _finite,
    "dtype_kept": _dtype_kept,
    "device_kept": _device_kept,
    "bool_dtype": _bool_dtype,
    "rows_sum_to_one": _rows_sum_to_one,
    "masked_weights_zero": _masked_weights_zero,
    "inputs_unchanged": _inputs_unchanged,
    "projected_once": _projected_once,
    "autograd_used": _autograd_used,
}
