"""The kernel's wire format: what the grader sends the student's kernel and what it accepts back.

Standard library only: this file's source is sent into the kernel with the harness (see
``session.KERNEL_MODULES``; the student environment has no attn_ref), and the grader parses every reply
with it. The checks the grader reads from the autograder zip are another format (``attn_ref/grade/checks_json.py``).

**A call** (grader -> kernel, ``call.json`` in a folder the kernel can only read; ``Call.to_json`` and
``Call.from_json``, the grader's and the harness's ends)::

    {"protocol": 1, "function": "softmax", "framework": "numpy" | "torch",
     "args": [{"name": "x", "kind": "array", "file": "arg0.npy", "dtype": "float32", "device": "cpu",
               "keyword": false} | {"name": "axis", "kind": "value", "value": 0, "keyword": true}
              | {"name": "device", "kind": "device", "device": "meta", "keyword": true}],
     "return_inputs": bool, "count_projections": ["W_k", ...], "tripwire": bool,
     "calls": 1 | 2 | 3,                   # called that many times on fresh inputs; the last result is the reply
     "substitutes": {"softmax": "def softmax(x, axis=-1): ...", ...}}   # known-correct earlier functions

**A call's reply** (kernel -> grader, ``reply.json`` in a folder the kernel owns; ``parse_call_reply``)::

    {"protocol": 1, "ok": true, "form": "tuple" | "list" | "single", "count": 2,
     "outputs": [OUTPUT, ...],             # the first MAX_OUTPUTS of them
     "inputs_after": [OUTPUT, ...],        # only when return_inputs
     "projected_rows": {"W_k": 16, ...},   # only when count_projections
     "autograd_used": true,                # torch: whether backward or autograd.grad ran during the call
     "forbidden_called": ["scaled_dot_product_attention", ...]}
    {"protocol": 1, "ok": false, "error": "ValueError: ...", "forbidden_called": [...],
     "meta_values_read": true}              # the call failed reading values that meta tensors do not have

    OUTPUT = {"kind": "tensor" | "ndarray", "dtype": "float32", "device": "cpu", "shape": [2, 3],
              "file": "out0.npy" | null}
           | {"kind": "scalar", "value": DESCRIPTION,     # typerules.describe
              "form": "python" | "numpy" | "tensor"}       # what held it (a 0-d tensor, a NumPy scalar)
           | {"kind": "other", "type": "list"}

Answer values (``parse_values``) and the kernel's environment (``parse_environment``) are replies too.
The kernel's replies are untrusted data: the parsers accept exactly these structures and raise
``MalformedReply`` for anything else; a value's *form* (tuple or list, 0-d tensor or float) is decided
by the type rules (typerules.py), never here. Outcomes of running anything in the kernel are ``Status``
values, carried from where they happen.
"""

import json
import re
from dataclasses import dataclass
from enum import Enum

from ...portable.typerules import MAX_DIGITS, MAX_TEXT  # sent with the harness
from .errors import GraderError  # sent with the harness
from .text import cap  # sent with the harness

PROTOCOL = 1
MAX_OUTPUTS = 8
MAX_DIMS = 8
MAX_ELEMENTS = 1 << 26
DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                    "uint32", "uint64", "bool", "complex64", "complex128"})
SAVED_AS = {"float16": "float32", "bfloat16": "float32"}  # a tensor's dtype -> its .npy's, where they differ
DESCRIPTION_KINDS = frozenset({"int", "float", "bool", "str", "fraction", "decimal", "dict", "ellipsis", "missing", "other"})
_DEVICE = re.compile(r"^[a-z]{2,10}(:[0-9]{1,2})?$")
_OUTPUT_FILE = re.compile(r"^(out|in)[0-9]\.npy$")


class Status(str, Enum):
    """What happened to one piece of work in the kernel."""

    OK = "ok"  # it ran and replied
    ERROR = "error"  # the student's code raised
    TIMEOUT = "timeout"  # it ran past its time
    DEAD = "dead"  # it killed the kernel
    MALFORMED = "malformed"  # its reply broke the protocol
    BUDGET = "budget"  # the submission's time budget ran out before it ran


class MalformedReply(GraderError, ValueError):
    """A reply from the kernel that does not follow the protocol."""


def load_json(data: bytes):
    """JSON from the kernel: any failure to parse (deep nesting, bad bytes, memory) is a MalformedReply."""
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError, MemoryError) as err:
        raise MalformedReply(f"the reply is not readable JSON ({type(err).__name__})") from None


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise MalformedReply(what)


def _header(reply) -> dict:
    _require(isinstance(reply, dict), "the reply is not an object")
    _require(reply.get("protocol") == PROTOCOL, "the reply names another protocol version")
    return reply


def _is_int(value, low: int = 0, high: int = 1 << 62) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _short_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) <= MAX_DIGITS


def _valid_pairs(desc, depth: int) -> bool:
    value = desc.get("v")
    return (depth == 0 and isinstance(value, list) and len(value) <= 50 and _is_int(desc.get("n", 0), 0)
            and all(isinstance(p, list) and len(p) == 2 and valid_description(p[0], 1) and valid_description(p[1], 1)
                    for p in value))


# One rule per kind of description: (the description, its nesting depth) -> whether it is well formed.
_DESCRIPTION_RULES = {
    "ellipsis": lambda desc, depth: True,
    "missing": lambda desc, depth: True,
    "bool": lambda desc, depth: isinstance(desc.get("v"), bool),
    "int": lambda desc, depth: _short_int(desc.get("v")),
    "float": lambda desc, depth: not isinstance(desc.get("v"), bool) and (isinstance(desc.get("v"), float)
                                                                          or desc.get("v") in ("nan", "inf", "-inf")),
    "fraction": lambda desc, depth: _short_int(desc.get("n")) and _short_int(desc.get("d")) and desc["d"] > 0,
    "str": lambda desc, depth: isinstance(desc.get("v"), str) and len(desc["v"]) <= MAX_TEXT,
    "dict": _valid_pairs,
}
_DESCRIPTION_RULES["decimal"] = _DESCRIPTION_RULES["other"] = _DESCRIPTION_RULES["str"]


def valid_description(desc, depth: int = 0) -> bool:
    """A value description as typerules.describe makes it (checked field by field)."""
    if not isinstance(desc, dict) or desc.get("t") not in DESCRIPTION_KINDS:
        return False
    return _DESCRIPTION_RULES[desc["t"]](desc, depth)


# ---- a call ------------------------------------------------------------------------------------------

SCALAR_FORMS = ("python", "numpy", "tensor")

@dataclass(frozen=True)
class CallArg:
    """One argument of a call: an array in a file of the call's folder, a device, or a literal value."""

    name: str
    kind: str  # "array" | "device" | "value"
    keyword: bool = False  # passed by name
    file: str = ""  # array: its .npy
    dtype: str = ""  # array: its dtype in the student's hands
    device: str = ""  # array: where it goes; device: the device itself
    value: object = None  # value: the literal

    def to_json(self) -> dict:
        found = {"name": self.name, "kind": self.kind, "keyword": self.keyword}
        if self.kind == "array":
            found.update(file=self.file, dtype=self.dtype, device=self.device)
        elif self.kind == "device":
            found["device"] = self.device
        else:
            found["value"] = self.value
        return found

    @classmethod
    def from_json(cls, raw: dict) -> "CallArg":
        return cls(raw["name"], raw["kind"], bool(raw.get("keyword")), raw.get("file", ""), raw.get("dtype", ""),
                   raw.get("device", ""), raw.get("value"))


@dataclass(frozen=True)
class Call:
    """What the grader asks the kernel: call ``function`` on ``args`` (``calls`` times, the last result
    replied), with known-correct earlier functions bound by name while it runs."""

    function: str
    framework: str  # "numpy" | "torch"
    args: tuple = ()  # CallArg, ...
    return_inputs: bool = False  # reply with the array inputs as they are after the call
    count_projections: tuple = ()  # names of inputs whose rows multiplied in a matmul are counted
    tripwire: bool = False  # watch for forbidden calls
    calls: int = 1  # 1 to 3
    substitutes: dict = None  # {function: source}

    def to_json(self) -> dict:
        return {"protocol": PROTOCOL, "function": self.function, "framework": self.framework,
                "args": [a.to_json() for a in self.args], "return_inputs": self.return_inputs,
                "count_projections": list(self.count_projections), "tripwire": self.tripwire, "calls": self.calls,
                "substitutes": dict(self.substitutes or {})}

    @classmethod
    def from_json(cls, raw: dict) -> "Call":
        """The grader's own call.json, read in the kernel (trusted data, written by the grader)."""
        return cls(raw["function"], raw["framework"], tuple(CallArg.from_json(a) for a in raw["args"]),
                   bool(raw.get("return_inputs")), tuple(raw.get("count_projections", ())), bool(raw.get("tripwire")),
                   max(1, min(int(raw.get("calls", 1)), 3)), dict(raw.get("substitutes", {})))


@dataclass(frozen=True)
class Output:
    """One value the student's function returned (or an input as it was after the call)."""

    kind: str  # "tensor" | "ndarray" | "scalar" | "other"
    dtype: str = ""
    device: str = ""
    shape: tuple[int, ...] = ()
    file: str | None = None
    value: dict | None = None  # a description, for kind == "scalar"
    form: str = "python"  # for kind == "scalar": "python", "numpy" (a NumPy scalar) or "tensor" (0-d)
    type: str = ""  # what it was, for kind == "other"


@dataclass(frozen=True)
class CallReply:
    ok: bool
    error: str = ""
    form: str = "single"  # "tuple" | "list" | "single"
    count: int = 0  # how many values came back (outputs holds the first MAX_OUTPUTS)
    outputs: tuple[Output, ...] = ()
    inputs_after: tuple[Output, ...] | None = None
    projected_rows: dict | None = None
    autograd_used: bool = False
    forbidden_called: tuple[str, ...] = ()
    meta_values_read: bool = False
    undefined: bool = False  # the function's name was not defined in the kernel (its cell raised or never ran)


def _output(raw, prefix: str) -> Output:
    _require(isinstance(raw, dict), "an output is not an object")
    kind = raw.get("kind")
    if kind in ("tensor", "ndarray"):
        dtype, device, shape, file = raw.get("dtype"), raw.get("device"), raw.get("shape"), raw.get("file")
        _require(dtype in DTYPES, "an output has an unknown dtype")
        _require(isinstance(device, str) and bool(_DEVICE.match(device)), "an output names an odd device")
        _require(isinstance(shape, list) and len(shape) <= MAX_DIMS and all(_is_int(n, 0, MAX_ELEMENTS) for n in shape),
                 "an output has an odd shape")
        size = 1
        for n in shape:
            size *= n
        _require(size <= MAX_ELEMENTS, "an output is too large")
        _require(file is None or (isinstance(file, str) and bool(_OUTPUT_FILE.match(file)) and file.startswith(prefix)),
                 "an output names an odd file")
        _require(kind == "tensor" or (device == "cpu" and file is not None), "an array without values")
        return Output(kind, dtype, device, tuple(shape), file)
    if kind == "scalar":
        _require(valid_description(raw.get("value")), "a scalar output is not a plain value")
        form = raw.get("form", "python")
        _require(form in SCALAR_FORMS, "a scalar output's form is not python, numpy or tensor")
        return Output(kind, value=raw["value"], form=form)
    if kind == "other":
        return Output(kind, type=cap(raw.get("type"), 80))
    raise MalformedReply("an output of an unknown kind")


def _forbidden_calls(reply: dict) -> tuple[str, ...]:
    forbidden = reply.get("forbidden_called", [])
    _require(isinstance(forbidden, list) and len(forbidden) <= 16 and all(isinstance(f, str) for f in forbidden),
             "the reply's forbidden calls are not a list of names")
    return tuple(cap(f, 100) for f in forbidden)


def _counted(reply: dict) -> tuple[str, int, list]:
    """What came back: its form, how many values, and the first MAX_OUTPUTS of them (each checked later)."""
    form, count, outputs = reply.get("form"), reply.get("count"), reply.get("outputs")
    _require(form in ("tuple", "list", "single"), "the reply does not say what came back")
    _require(isinstance(outputs, list) and len(outputs) <= MAX_OUTPUTS, "the reply's outputs are not a short list")
    _require(_is_int(count, 0, 1 << 40) and count >= len(outputs) and (form != "single" or count == 1),
             "the reply's count does not match its outputs")
    _require(len(outputs) == min(count, MAX_OUTPUTS), "the reply's count does not match its outputs")
    return form, count, outputs


def _inputs_after(reply: dict) -> tuple[Output, ...] | None:
    inputs = reply.get("inputs_after")
    if inputs is None:
        return None
    _require(isinstance(inputs, list) and len(inputs) <= MAX_OUTPUTS, "the reply's inputs are not a short list")
    return tuple(_output(raw, "in") for raw in inputs)


def _projected_rows(reply: dict) -> dict | None:
    rows = reply.get("projected_rows")
    if rows is not None:
        _require(isinstance(rows, dict) and len(rows) <= MAX_OUTPUTS
                 and all(isinstance(k, str) and len(k) <= 20 and _is_int(v) for k, v in rows.items()),
                 "the reply's projection counts are not plain counts")
    return rows


def parse_call_reply(data: bytes) -> CallReply:
    """The validated reply to one call; MalformedReply for anything outside the protocol."""
    reply = _header(load_json(data))
    ok = reply.get("ok")
    _require(isinstance(ok, bool), "the reply does not say whether the call worked")
    forbidden = _forbidden_calls(reply)
    if not ok:
        return CallReply(False, error=cap(reply.get("error")) or "the call failed", forbidden_called=forbidden,
                         meta_values_read=reply.get("meta_values_read") is True,
                         undefined=reply.get("undefined") is True)
    form, count, outputs = _counted(reply)
    inputs, rows = _inputs_after(reply), _projected_rows(reply)
    return CallReply(True, form=form, count=count, outputs=tuple(_output(raw, "out") for raw in outputs),
                     inputs_after=inputs, projected_rows=rows, autograd_used=reply.get("autograd_used") is True,
                     forbidden_called=forbidden)


# ---- answer values and the kernel's environment ----------------------------------------------------

def parse_values(data: bytes, names: list[str]) -> dict[str, dict]:
    """{name: description} for exactly ``names``; a name the reply lacks or garbles reads as missing."""
    reply = _header(load_json(data))
    values = reply.get("values")
    _require(isinstance(values, dict), "the reply has no values")
    return {name: values[name] if valid_description(values.get(name)) else {"t": "missing"} for name in names}


def parse_environment(data: bytes) -> dict:
    """What the kernel says it runs on, kept only where it has the expected type (it is for the record)."""
    reply = _header(load_json(data))
    env = {"numpy": cap(reply.get("numpy"), 40), "torch": cap(reply.get("torch"), 40) or None,
           "cuda": reply.get("cuda") is True, "device": cap(reply.get("device"), 100) or "cpu",
           "uid": reply.get("uid") if _is_int(reply.get("uid")) else None}
    if isinstance(reply.get("torch_error"), str):
        env["torch_error"] = cap(reply["torch_error"])
    return env
