"""Code the grader runs INSIDE the student's kernel, after the notebook, to read values and call functions.

It is sent as source after the modules it speaks (session.KERNEL_MODULES), in one namespace, with the
imports marked "sent with the harness" dropped: the student environment has numpy and torch, not attn_ref.
It hands back plain data only: JSON and arrays saved as .npy (loaded with allow_pickle=False).

Nothing here is trusted: student code shares this process and can replace any of it. Whatever it
reports is validated by the grader, and what it measures (the tripwire, the projection count) may only
take points away.
"""

import contextlib
import json
import os
import weakref

import numpy as np

from ...portable.typerules import describe  # sent with the harness
from .text import cap  # sent with the harness
from .wire import MAX_OUTPUTS, PROTOCOL, SAVED_AS, Call  # sent with the harness

MATMULS = {"matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "linear", "einsum", "tensordot", "inner", "dot", "addmm",
           "baddbmm", "matmul_"}
# Every overload of anything named like these, torch.ops.aten included (the function mode sees calls
# before they decompose; the dispatch mode sees the fused kernels underneath).
FORBIDDEN_FAMILIES = ("scaled_dot_product", "multi_head_attention", "multihead_attention", "flash_attention",
                      "efficient_attention", "cudnn_attention")


def _main_namespace():
    import __main__

    return vars(__main__)


def _write_json(out_dir, name, data):
    path = os.path.join(out_dir, name)
    with open(path + ".part", "w") as f:
        f.write(json.dumps(data))  # json.dump to a file encodes in Python; dumps in C, the same text
    os.replace(path + ".part", path)


def _describe_safely(value):
    try:
        return describe(value)
    except Exception:  # noqa: BLE001 - a value whose own methods fail is one unreadable answer, not all
        return {"t": "other", "v": "a value that could not be read"}


def read_values(names, out_dir):
    ns = _main_namespace()
    values = {name: (_describe_safely(ns[name]) if name in ns else {"t": "missing"}) for name in names}
    _write_json(out_dir, "reply.json", {"protocol": PROTOCOL, "values": values})


def environment(out_dir):
    """What the student's kernel runs on: library versions and whether CUDA is there."""
    info = {"protocol": PROTOCOL, "numpy": np.__version__, "torch": None, "cuda": False, "device": "cpu",
            "uid": os.getuid()}
    try:
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["cuda"] = True
            info["device"] = torch.cuda.get_device_name(0)
    except Exception as err:  # no torch: the torch tasks will say so
        info["torch_error"] = cap("%s: %s" % (type(err).__name__, err))
    _write_json(out_dir, "reply.json", info)


def _reset_torch(torch):
    """Undo global state a notebook may have changed: default dtype, TF32, seeds."""
    torch.set_default_dtype(torch.float32)
    # torch.manual_seed(0) also queues a seed for every accelerator torch knows (CUDA, XPU, MTIA), each with a
    # stack trace taken when none is there: a tenth of a mutant's call. A grader has the CPU and at most CUDA.
    torch.random.default_generator.manual_seed(0)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def _op_names(func):
    names = [getattr(func, "__name__", ""), getattr(func, "__qualname__", "")]
    try:
        names.append(str(getattr(func, "_name", "") or ""))
        if type(func).__name__ in ("OpOverload", "OpOverloadPacket"):
            names.append(str(func))
    except Exception:  # noqa: BLE001
        pass
    return " ".join(n for n in names if isinstance(n, str)).lower()


# id(func) -> (func, the forbidden family its names fall in, or None): an op's names never change. Keyed by
# identity, with the func held so that its id is never reused: an object that claims to equal a forbidden op
# does not answer for it.
_families = {}


def _forbidden(func):
    seen = _families.get(id(func))
    if seen is not None and seen[0] is func:
        return seen[1]
    family = _family(func)
    _families[id(func)] = (func, family)
    return family


def _family(func):
    names = _op_names(func)
    return next((family for family in FORBIDDEN_FAMILIES if family in names), None)


class _Watch:
    """The tripwire and the projection counter for one call.

    The function mode sees forbidden functions however they were reached (an alias saved earlier, a
    helper, getattr, torch.ops.aten); the dispatch mode adds the fused kernels underneath. Projections:
    rows multiplied by each named weight, or by anything made from it (a transpose, a fused QKV matrix).
    """

    def __init__(self, torch, weights, tripwire):
        self.torch, self.tripwire = torch, tripwire
        self.weights = weights  # name -> tensor
        self.rows = {name: 0 for name in weights}
        self.forbidden_called = set()
        self.autograd_used = False
        self.meta_values_read = False  # an op that needs tensor values (an `if` on a tensor) met a meta tensor
        self.derived = _IdentityMap()  # tensor -> names of the weights it was made from
        for name, w in weights.items():
            self.derived[w] = {name}

    def _sources(self, values):
        found = set()
        for v in values:
            if isinstance(v, (list, tuple)):
                found |= self._sources(v)
            elif isinstance(v, self.torch.Tensor):
                found |= self.derived.get(v, set())
        return found

    def function_mode(self):
        torch, watch = self.torch, self

        class Mode(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if getattr(func, "__name__", "") in ("backward", "grad", "_engine_run_backward"):
                    watch.autograd_used = True
                family = _forbidden(func) if watch.tripwire else None
                if family:
                    watch.forbidden_called.add(_op_names(func).split()[0] or family)
                result = func(*args, **kwargs)
                if watch.weights:
                    watch._count(func, args, kwargs, result)
                return result

        return Mode()

    def meta_mode(self):
        """Meta tensors have shapes and devices but no values. Code that reads values (``if t.any()``,
        ``.item()``, ``.tolist()``, ``.cpu().numpy()``, ``torch.allclose``) is sound, so a read gets stand-in
        values (zeros; True for a comparison) and the call goes on, to show where its outputs land. A read
        that cannot be stood in for (boolean indexing: the size depends on the values) raises as before;
        either way the reply notes it, and a failure after a read says nothing about devices. An op whose
        tensors are all on meta is worked out on CPU stand-ins (_on_cpu_stand_ins), not by torch's Python
        meta kernels, whose first call imports torch's compiler."""
        from torch.utils._python_dispatch import TorchDispatchMode

        torch, watch = self.torch, self

        def on_meta(values):
            return any(isinstance(a, torch.Tensor) and a.device.type == "meta" for a in values)

        class Mode(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls):
                return False  # as in dispatch_mode: never compiled

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                name = getattr(func, "__name__", "").split(".")[0]
                if name in STAND_IN_READS and on_meta(args):
                    watch.meta_values_read = True
                    if name != "_local_scalar_dense":
                        return True  # allclose, equal: "the same"
                    dtype = args[0].dtype
                    return False if dtype == torch.bool else 0.0 if dtype.is_floating_point else 0
                if name == "_to_copy" and on_meta(args) and str(kwargs.get("device", "meta")) != "meta":
                    watch.meta_values_read = True  # copied out of a meta tensor (.cpu(), .tolist(), .numpy())
                    return torch.zeros(args[0].shape, dtype=kwargs.get("dtype") or args[0].dtype, device=kwargs["device"])
                if name in VALUE_OPS or (name == "index" and _bool_index(args, torch)):
                    if on_meta(_flat(args, kwargs)):
                        watch.meta_values_read = True
                    return func(*args, **kwargs)
                if name in ("masked_fill", "masked_fill_") and _cpu_scalar_value(args, torch):
                    # CUDA's masked_fill reads a 0-d CPU value (value.item()), as every elementwise op takes a CPU
                    # scalar tensor; only torch's meta kernel demands the value on self's device, which would fail
                    # correct code (`masked_fill(~mask, torch.tensor(-inf))`) on the device line.
                    args = (*args[:2], args[2].to("meta"), *args[3:])
                found = _on_cpu_stand_ins(func, args, kwargs, torch)
                return func(*args, **kwargs) if found is _MISSING else found

        return Mode()

    def dispatch_mode(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        watch = self

        class Mode(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls):
                # Else torch wraps __torch_dispatch__ for torch.compile, and the first call imports
                # torch._dynamo (about a CPU-second per submission); the tripwire never compiles.
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if _forbidden(func):
                    watch.forbidden_called.add(_op_names(func).split()[0])
                return func(*args, **(kwargs or {}))

        return Mode()

    def _count(self, func, args, kwargs, result):
        operands = list(args) + list(kwargs.values())
        sources = self._sources(operands)
        if not sources:
            return
        name = getattr(func, "__name__", "")
        if name in MATMULS:
            tensors = [a for a in operands if isinstance(a, self.torch.Tensor)]
            others = [t for t in tensors if not self.derived.get(t)]
            if others:
                for weight in sources:
                    width = self.weights[weight].shape[0]  # d_model: the dimension a projection contracts
                    self.rows[weight] += others[0].numel() // max(1, width)
            return
        if isinstance(result, self.torch.Tensor):  # a view, copy or concatenation of a weight is that weight
            self.derived[result] = set(sources)


def _cpu_scalar_value(args, torch) -> bool:
    """Whether a masked_fill's self is on meta and its value a 0-d tensor elsewhere (a CPU scalar)."""
    return (len(args) >= 3 and isinstance(args[0], torch.Tensor) and args[0].device.type == "meta"
            and isinstance(args[2], torch.Tensor) and args[2].dim() == 0 and args[2].device.type != "meta")


def _left_to_meta(func, args, kwargs, torch) -> bool:
    """Whether an op must go to torch's meta kernel: a view, ``out=``, random numbers, an in-place op that does not
    return its own input, a device other than meta, a tensor off meta, or too many elements to stand in for."""
    if func.is_view or "out" in kwargs or torch.Tag.nondeterministic_seeded in func.tags:
        return True
    if func._schema.is_mutable and not (func._schema.name.endswith("_") and len(func._schema.returns) == 1):
        return True
    device = kwargs.get("device")
    if device is not None and torch.device(device).type != "meta":
        return True
    tensors = [v for v in _flat(args, kwargs) if isinstance(v, torch.Tensor)]
    if not tensors and device is None or any(t.device.type != "meta" for t in tensors):
        return True
    return sum(t.numel() for t in tensors) > _STAND_IN_LIMIT


def _zeros_laid_out_as(value, stand_ins: dict, torch):
    """A CPU tensor of zeros with ``value``'s shape, strides and offset (one per tensor: aliases stay aliases)."""
    if isinstance(value, torch.Tensor):
        if id(value) not in stand_ins:
            size = value.storage_offset() + 1 + sum((n - 1) * s for n, s in zip(value.shape, value.stride()) if n)
            storage = torch.zeros(size if value.numel() else 0, dtype=value.dtype)
            stand_ins[id(value)] = storage.as_strided(value.shape, value.stride(), value.storage_offset())
        return stand_ins[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_zeros_laid_out_as(v, stand_ins, torch) for v in value)
    return value


def _on_meta(value, torch):
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_on_meta(v, torch) for v in value)
    return value


def _on_cpu_stand_ins(func, args, kwargs, torch):
    """What an op on meta tensors gives, found by running it on CPU tensors of zeros laid out as they are and
    giving its outputs back as meta tensors of those shapes, strides and dtypes.

    Why: torch's meta kernels are mostly Python decompositions, and their first call imports torch's
    compiler and sympy (a CPU-second or more, the largest part of a single grading's start-up). Only where
    every tensor of the op is on meta (and any device it is asked for is meta): an op that mixes devices,
    reads values, makes a view, draws random numbers, writes to ``out=`` or fails on CPU is left to the meta
    kernel, so what it does (the device errors that the meta probes are for) is exactly what it did.
    Returns _MISSING for those."""
    if _left_to_meta(func, args, kwargs, torch):
        return _MISSING
    stand_ins = {}
    cpu_args = [_zeros_laid_out_as(a, stand_ins, torch) for a in args]
    cpu_kwargs = {k: _zeros_laid_out_as(v, stand_ins, torch) for k, v in kwargs.items()}
    if kwargs.get("device") is not None:
        cpu_kwargs["device"] = torch.device("cpu")
    try:
        result = func(*cpu_args, **cpu_kwargs)
    except Exception:  # noqa: BLE001 - the meta kernel decides, as it did
        return _MISSING
    if func._schema.is_mutable:
        target = args[0]
        if not isinstance(target, torch.Tensor) or result is not stand_ins.get(id(target)) or result.shape != target.shape:
            return _MISSING
        return target
    return _on_meta(result, torch)


_STAND_IN_LIMIT = 1 << 22  # elements: beyond, the meta kernel (it allocates nothing)

# aten ops that read a tensor's values into Python or size a result by them: on meta tensors they fail
STAND_IN_READS = frozenset({"_local_scalar_dense", "allclose", "equal"})  # a Python value comes back
VALUE_OPS = frozenset({"is_nonzero", "nonzero", "nonzero_static", "argwhere", "masked_select", "_unique", "_unique2",
                       "unique_dim", "unique_consecutive", "repeat_interleave"})  # sized by the values: they raise


def _flat(args, kwargs):
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, (list, tuple)):
            yield from v
        else:
            yield v


def _bool_index(args, torch):
    indices = args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else ()
    return any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in indices)


class _IdentityMap:
    """Tensor -> value by identity (a tensor's == is elementwise), forgotten when the tensor is."""

    def __init__(self):
        self._items = {}

    def get(self, key, default=None):
        entry = self._items.get(id(key))
        return entry[1] if entry is not None and entry[0]() is key else default

    def __setitem__(self, key, value):
        self._items[id(key)] = (weakref.ref(key), value)


def call(function, call_dir, out_dir):
    """Call the student's function on the inputs the grader wrote; describe and save what comes back."""
    try:
        reply = _call(function, call_dir, out_dir)
    except BaseException as err:  # noqa: BLE001 (student code may raise anything, SystemExit too)
        if isinstance(err, KeyboardInterrupt):
            raise
        reply = _failure(err, None)
    _write_json(out_dir, "reply.json", reply)


def calls(function, exchanges):
    """call() on each [call_dir, out_dir] in order, in one request: a request costs the kernel and the grader more
    than most calls do. The grader holds each call to its own time limit, counted from the reply before it, and
    an interrupt (a call past its time) ends the loop there."""
    for call_dir, out_dir in exchanges:
        call(function, call_dir, out_dir)


def _failure(err, watch):
    reply = {"protocol": PROTOCOL, "ok": False, "error": cap("%s: %s" % (type(err).__name__, err))}
    if watch is not None:  # a forbidden call that then raised is still a forbidden call
        reply["forbidden_called"] = sorted(watch.forbidden_called)
        if watch.meta_values_read:
            reply["meta_values_read"] = True
    return reply


# The trusted runners (mutants, seed sweep) call many functions on one call's files: they set this to {} for
# each call's files, and each array is read once and copied for every function (a function may write into its
# inputs). A kernel leaves it None: each call's folder is new, and nothing read is kept.
shared_reads = None


def _read_array(path):
    if shared_reads is None:
        return np.load(path, allow_pickle=False)
    if path not in shared_reads:
        shared_reads[path] = np.load(path, allow_pickle=False)
    return shared_reads[path].copy()


def _load_args(spec, call_dir, torch):
    args, kwargs, named = [], {}, {}
    for arg in spec.args:
        if arg.kind == "array":
            value = _read_array(os.path.join(call_dir, arg.file))
            if value.dtype.kind == "f":
                value = value.astype(arg.dtype)
            if torch is not None:
                value = torch.from_numpy(value).to(arg.device)
        elif arg.kind == "device":
            value = arg.device
        else:
            value = arg.value
        named[arg.name] = value
        if arg.keyword:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return args, kwargs, named


def _call(function, call_dir, out_dir):
    with open(os.path.join(call_dir, "call.json")) as f:
        spec = Call.from_json(json.load(f))
    ns = _main_namespace()
    fn = ns.get(function)
    if not callable(fn):
        return {"protocol": PROTOCOL, "ok": False, "undefined": True,
                "error": "function `%s` is not defined" % function}
    torch = None
    if spec.framework == "torch":
        import torch

        _reset_torch(torch)
    substitutes = _substitutes(spec.substitutes)
    saved = {name: ns.get(name, _MISSING) for name in substitutes}
    ns.update(substitutes)
    watch = None
    try:
        # "calls": the function is called that many times on fresh copies of the inputs and the last result is
        # graded (state kept between calls shows: a second call must start from an empty cache)
        for call_number in range(spec.calls):
            args, kwargs, named = _load_args(spec, call_dir, torch)
            if torch is None:
                result = fn(*args, **kwargs)
                continue
            if call_number == 0:  # one watch for every call: a forbidden call in any of them counts
                watch = _Watch(torch, {n: named[n] for n in spec.count_projections}, spec.tripwire)
            result = _watched_call(fn, args, kwargs, spec, named, torch, watch)
    except Exception as err:  # noqa: BLE001 - the student's function raised
        return _failure(err, watch)
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                ns.pop(name, None)
            else:
                ns[name] = value
    return _reply(result, spec, named, watch, out_dir)


def _watched_call(fn, args, kwargs, spec, named, torch, watch):
    """A torch call under the watch's modes: meta values stood in for, forbidden calls seen, projections counted."""
    on_meta = any(isinstance(v, torch.Tensor) and v.device.type == "meta" for v in named.values())
    on_meta |= any(a.kind == "device" and a.device == "meta" for a in spec.args)
    with contextlib.ExitStack() as modes:
        if on_meta:
            modes.enter_context(watch.meta_mode())
        if spec.tripwire:
            modes.enter_context(watch.dispatch_mode())
        modes.enter_context(watch.function_mode())
        return fn(*args, **kwargs)


def _reply(result, spec, named, watch, out_dir):
    """The reply to a call that returned: what came back (saved as .npy), and what the watch saw."""
    if isinstance(result, (tuple, list)):
        form, items = ("tuple" if isinstance(result, tuple) else "list"), list(result)
    else:
        form, items = "single", [result]
    reply = {"protocol": PROTOCOL, "ok": True, "form": form, "count": len(items),
             "outputs": [_save(item, out_dir, "out%d.npy" % i) for i, item in enumerate(items[:MAX_OUTPUTS])]}
    if spec.return_inputs:
        arrays = [a for a in spec.args if a.kind == "array"]
        reply["inputs_after"] = [_save(named[a.name], out_dir, "in%d.npy" % i) for i, a in enumerate(arrays)]
    if watch is not None:
        reply["forbidden_called"] = sorted(watch.forbidden_called)
        if spec.count_projections:
            reply["projected_rows"] = watch.rows
        reply["autograd_used"] = watch.autograd_used
    return reply


_MISSING = object()


def _save(item, out_dir, name):
    path = os.path.join(out_dir, name)
    if type(item).__name__ == "Tensor" or (hasattr(item, "detach") and hasattr(item, "device") and hasattr(item, "shape")):
        desc = {"kind": "tensor", "dtype": str(item.dtype).replace("torch.", ""), "device": item.device.type,
                "shape": list(item.shape), "file": None}
        if item.ndim == 0:
            return {"kind": "scalar", "value": describe(item), "form": "tensor"} if item.device.type != "meta" else desc
        if item.device.type != "meta":
            data = item.detach().cpu()
            if desc["dtype"] in SAVED_AS:  # half precision is saved as float32 (NumPy has no bfloat16)
                data = data.float()
            np.save(path, np.ascontiguousarray(data.numpy()), allow_pickle=False)
            desc["file"] = name
        return desc
    if isinstance(item, np.ndarray) and item.ndim > 0:
        if item.dtype.kind not in "biuf":
            return {"kind": "other", "type": "ndarray of %s" % item.dtype}
        np.save(path, np.ascontiguousarray(item), allow_pickle=False)
        return {"kind": "ndarray", "dtype": str(item.dtype), "device": "cpu", "shape": list(item.shape), "file": name}
    value = describe(item)
    if value["t"] in ("int", "float", "bool", "fraction", "decimal"):
        return {"kind": "scalar", "value": value, "form": "numpy" if isinstance(item, np.generic) else "python"}
    return {"kind": "other", "type": cap(value.get("v") or value["t"], 80)}


def _substitutes(sources):
    """{function name: known-correct minimal implementation}: each source runs in a namespace of its own
    (numpy, torch, math), never the student's; bound under the student's name while a later task that
    builds on it is graded, so a bug is charged once."""
    import math

    found = {}
    for name, source in sources.items():
        namespace = {"np": np, "math": math}
        try:
            import torch

            namespace["torch"] = torch
        except ImportError:
            pass
        exec(compile(source, "<substitute %s>" % name, "exec"), namespace)
        namespace.update(found)
        found[name] = namespace[name]
    return found
