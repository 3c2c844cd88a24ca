"""Run the instructor's mutants on a probe's inputs: a process of its own, with the students' interpreter
(NumPy and torch), never the student's kernel. Only trusted code and trusted data come here: the
assignment's helpers (setup and solutions), its mutants, and inputs the grader generated.

Sent as a file and run as `python -I mistakes_runner.py` (no attn_ref: standard library, NumPy, torch).
One JSON request per line on stdin, one JSON reply per line on stdout:

    first line:  {"helpers": SOURCE}                       the namespace every mutant starts from
    request:     {"folder": DIR, "function": NAME, "framework": "numpy" | "torch", "dtype": "float64",
                  "args": [{"name", "file" | "value", "keyword"}], "mutants": [[ID, SOURCE], ...]}
    reply:       {"results": {ID: {"outputs": [{"file": NAME} | {"value": NUMBER}]} | {"error": TEXT}}}

Mutant ID's outputs are saved as DIR/m<ID>_<j>.npy.
"""

import json
import os
import sys

import numpy as np

_namespaces = {}


def _namespace(helpers, source):
    if source not in _namespaces:
        namespace = {"__name__": "__mistakes__"}
        exec(compile(helpers, "<helpers>", "exec"), namespace)
        exec(compile(source, "<mutant>", "exec"), namespace)
        _namespaces[source] = namespace
    return _namespaces[source]


def _inputs(request):
    torch = None
    if request["framework"] == "torch":
        import torch
    args, kwargs = [], {}
    for arg in request["args"]:
        if "file" in arg:
            value = np.load(os.path.join(request["folder"], arg["file"]), allow_pickle=False)
            if value.dtype.kind == "f":
                value = value.astype(request["dtype"])
            value = torch.from_numpy(value) if torch is not None else value
        else:
            value = arg["value"]
        if arg["keyword"]:
            kwargs[arg["name"]] = value
        else:
            args.append(value)
    return args, kwargs


def _saved(result, folder, mutant):
    outputs = []
    for j, item in enumerate(result if isinstance(result, tuple) else (result,)):
        if hasattr(item, "detach"):
            item = item.detach().cpu().numpy() if item.ndim else item.item()
        if isinstance(item, np.ndarray):
            name = "m%s_%d.npy" % (mutant, j)
            np.save(os.path.join(folder, name), np.ascontiguousarray(item), allow_pickle=False)
            outputs.append({"file": name})
        elif isinstance(item, (int, float, np.number)) and not isinstance(item, bool):
            outputs.append({"value": float(item)})
        else:
            outputs.append({"other": type(item).__name__})
    return outputs


def main():
    replies, sys.stdout = sys.stdout, sys.stderr  # what the helpers or mutants print never mixes with replies
    helpers = json.loads(sys.stdin.readline())["helpers"]
    for line in sys.stdin:
        request = json.loads(line)
        results = {}
        for mutant, source in request["mutants"]:
            try:
                function = _namespace(helpers, source)[request["function"]]
                args, kwargs = _inputs(request)  # fresh inputs: a mutant may write into them
                results[mutant] = {"outputs": _saved(function(*args, **kwargs), request["folder"], mutant)}
            except Exception as err:  # noqa: BLE001 - a mutant that raises on these inputs matches nothing
                results[mutant] = {"error": "%s: %s" % (type(err).__name__, str(err)[:200])}
        replies.write(json.dumps({"results": results}) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
