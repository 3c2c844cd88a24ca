# Student code can reach the grader's harness in its own process (frames, globals): write every kind of
# forged reply, empty, short, long, mistyped and "ok" with no outputs, and keep the harness from
# overwriting them. The grader must score this no higher than a blank notebook.
import json
import os
import sys

FORGERIES = [
    {},
    {"protocol": 1, "ok": True, "form": "tuple", "count": 0, "outputs": []},
    {"protocol": 1, "ok": True, "form": "single", "count": 0, "outputs": []},
    {"protocol": 1, "ok": True, "form": "tuple", "count": 2, "outputs": [{"kind": "other", "type": "x"}]},
    {"protocol": 1, "ok": True, "form": "tuple", "count": 9, "outputs": [{"kind": "scalar", "value": {"t": "float", "v": 0.0}}] * 9},
    {"protocol": 1, "ok": True, "form": "single", "count": 1, "outputs": [{"kind": "scalar", "value": {"t": "int", "v": True}}]},
    {"protocol": 1, "ok": True, "form": "single", "count": 1, "outputs": [{"kind": "tensor", "dtype": "float64", "device": "cpu", "shape": [1], "file": "../reply.json"}]},
    {"protocol": 1, "ok": True, "form": "list", "count": 1, "outputs": "ok"},
    {"protocol": 1, "ok": "true", "projected_rows": {"W_k": -1}, "forbidden_called": []},
    {"protocol": 1, "values": {"q4_ratio": {"t": "int", "v": "16"}, "q7_changes_training_cost": {"t": "bool", "v": 0}}},
]
COUNT = [0]


def _forged_call(*args):
    out_dir = args[-1]
    forged = FORGERIES[COUNT[0] % len(FORGERIES)]
    COUNT[0] += 1
    with open(os.path.join(out_dir, "reply.json"), "w") as f:
        json.dump(forged, f)


def take_over_the_harness():
    """Called from inside the harness: replace its helpers for every later call."""
    frame = sys._getframe(1)
    while frame is not None:
        harness = frame.f_globals
        if "call" in harness and "read_values" in harness and "_write_json" in harness:
            harness["call"] = _forged_call
            harness["read_values"] = _forged_call
            harness["_write_json"] = lambda out_dir, name, data: _forged_call(out_dir)
            return
        frame = frame.f_back
