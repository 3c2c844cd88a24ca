"""Code the grader runs INSIDE the student's kernel, after the notebook, to read values and call functions.

Self-contained on purpose: the student's environment has numpy and torch, not attn_ref. It hands back
plain data only: JSON descriptions and arrays saved as .npy (the grader loads them with
allow_pickle=False). Nothing it writes is ever unpickled or executed by the grader.
"""

import json
import os

import numpy as np

MAX_TEXT = 300
MATMULS = {"matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "linear", "einsum"}


def _main_namespace():
    import __main__

    return vars(__main__)


def describe(value, depth=0):
    """A plain-data description of a Python value, types kept apart (bool is not int)."""
    kind = type(value).__name__
    if isinstance(value, (bool, np.bool_)):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"t": "int", "v": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"t": "float", "v": float(value)}
    if isinstance(value, str):
        return {"t": "str", "v": value[:MAX_TEXT]}
    if isinstance(value, dict) and depth == 0:
        items = list(value.items())[:50]
        return {"t": "dict", "v": [[describe(k, 1), describe(v, 1)] for k, v in items]}
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return describe(value.item(), depth)
    if kind == "Tensor" and getattr(value, "ndim", None) == 0:
        return describe(value.detach().cpu().item(), depth)
    if value is Ellipsis:
        return {"t": "ellipsis"}
    return {"t": "other", "v": kind[:80]}


def read_values(names, out_path):
    ns = _main_namespace()
    found = {name: (describe(ns[name]) if name in ns else {"t": "missing"}) for name in names}
    _write_json(out_path, found)


def _write_json(path, data):
    tmp = path + ".part"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _reset_torch(torch):
    """Undo global state a notebook may have changed: default dtype, TF32, seeds."""
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(0)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def environment(out_path):
    """What the student's kernel runs on: library versions and whether CUDA is there."""
    info = {"numpy": np.__version__, "torch": None, "cuda": False, "device": "cpu", "uid": os.getuid()}
    try:
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["cuda"] = True
            info["device"] = torch.cuda.get_device_name(0)
    except Exception as err:  # no torch: the torch tasks will say so
        info["torch_error"] = f"{type(err).__name__}: {str(err)[:MAX_TEXT]}"
    _write_json(out_path, info)


class _Watch:
    """A TorchFunctionMode for one call: counts rows multiplied by given weights (the KV-cache probe) and
    notes forbidden functions however they were reached (an alias saved earlier, a helper, getattr)."""

    def __init__(self, torch, weights, forbidden):
        self.torch, self.weights, self.forbidden = torch, weights, set(forbidden)
        self.rows = {name: 0 for name in weights}
        self.forbidden_called = set()

    def mode(self):
        torch, watch = self.torch, self

        def storage(t):
            try:
                return t.untyped_storage().data_ptr()
            except Exception:
                return None

        def is_weight(t, w):
            return t is w or storage(t) == storage(w)

        class Mode(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "")
                if name in watch.forbidden:
                    watch.forbidden_called.add(name)
                if name in MATMULS:
                    tensors = [a for a in args if isinstance(a, torch.Tensor)]
                    for weight_name, w in watch.weights.items():
                        others = [t for t in tensors if not is_weight(t, w)]
                        if others and len(others) < len(tensors):  # w is an operand
                            watch.rows[weight_name] += others[0].numel() // max(1, w.shape[0])
                return func(*args, **(kwargs or {}))

        return Mode()


def call(function, spec_path, out_dir):
    """Call the student's function on the inputs the grader wrote; describe and save what comes back."""
    with open(spec_path) as f:
        spec = json.load(f)
    meta = {"ok": False}
    try:
        meta = _call(function, spec, out_dir)
    except BaseException as err:  # noqa: BLE001 (student code may raise anything, SystemExit too)
        if isinstance(err, KeyboardInterrupt):
            raise
        meta = {"ok": False, "error": f"{type(err).__name__}: {str(err)[:MAX_TEXT]}"}
    _write_json(os.path.join(out_dir, "meta.json"), meta)


def _call(function, spec, out_dir):
    fn = _main_namespace().get(function)
    if not callable(fn):
        return {"ok": False, "error": f"function `{function}` is not defined"}
    torch = None
    if spec["framework"] == "torch":
        import torch

        _reset_torch(torch)
    args, kwargs, named = [], {}, {}
    for arg in spec["args"]:
        if arg["kind"] == "array":
            value = np.load(os.path.join(out_dir, arg["file"]), allow_pickle=False)
            if value.dtype.kind == "f":
                value = value.astype(arg["dtype"])
            if torch is not None:
                value = torch.from_numpy(value).to(arg["device"])
        elif arg["kind"] == "device":
            value = arg["device"]
        else:
            value = arg["value"]
        named[arg["name"]] = value
        if arg["keyword"]:
            kwargs[arg["name"]] = value
        else:
            args.append(value)
    watch = None
    if torch is not None:
        watch = _Watch(torch, {n: named[n] for n in spec.get("count_projections", [])}, spec.get("tripwire", []))
        with watch.mode():
            result = fn(*args, **kwargs)
    else:
        result = fn(*args, **kwargs)
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    outputs = [_save(item, os.path.join(out_dir, f"out{i}.npy")) for i, item in enumerate(items[:8])]
    meta = {"ok": True, "returned": "tuple" if isinstance(result, (tuple, list)) else "single", "outputs": outputs}
    if spec.get("return_inputs"):
        meta["inputs_after"] = [_save(named[a["name"]], os.path.join(out_dir, f"in{i}.npy")) for i, a in enumerate(spec["args"]) if a["kind"] == "array"]
    if watch is not None:
        meta["projected_rows"] = watch.rows
        meta["forbidden_called"] = sorted(watch.forbidden_called)
    return meta


def _save(item, path):
    kind = type(item).__name__
    if kind == "Tensor" or (hasattr(item, "detach") and hasattr(item, "device")):
        desc = {"kind": "tensor", "dtype": str(item.dtype).replace("torch.", ""), "device": item.device.type, "shape": list(item.shape)}
        if item.device.type != "meta":
            data = item.detach().cpu()
            if desc["dtype"] in ("bfloat16", "float16"):
                data = data.float()
            np.save(path, np.ascontiguousarray(data.numpy()), allow_pickle=False)
            desc["file"] = os.path.basename(path)
        return desc
    if isinstance(item, np.ndarray):
        if item.dtype.kind not in "biuf":
            return {"kind": "other", "type": f"ndarray of {item.dtype}"}
        np.save(path, np.ascontiguousarray(item), allow_pickle=False)
        return {"kind": "ndarray", "dtype": str(item.dtype), "device": "cpu", "shape": list(item.shape), "file": os.path.basename(path)}
    return {"kind": "scalar", "value": describe(item)}
