"""Trusted-side pieces as plain functions (no kernel): the type rules, the protocol's validation of
replies, reading kernel files safely, the tolerance model and the static checks."""

import json
import os
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from course_units import ANSWERS

from attn_ref.grade.checks_json import FunctionUnit, Probe
from attn_ref.grade.inkernel.wire import MalformedReply, parse_call_reply, parse_values
from attn_ref.grade.isolation.safeio import UnsafeReply, read_reply
from attn_ref.grade.scoring.comparators import check_answer, compare_array
from attn_ref.grade.scoring.static import analyse, forbidden_uses
from attn_ref.grade.session import is_otter_call
from attn_ref.portable import typerules
from attn_ref.portable.typerules import describe


@pytest.mark.parametrize(
    "kind, expected, value, ok",
    [
        ("int", 16, 16, True),
        ("int", 16, 16.0, True),  # 32**2 / 8**2
        ("int", 16, np.int64(16), True),
        ("int", 16, 16.5, False),
        ("int", 1, True, False),  # a bool never counts as an integer
        ("int", 16, "16", False),
        ("float", ANSWERS["q8_product_39"], 0.0164, True),
        ("float", ANSWERS["q8_product_39"], 0.017, False),  # the note's slip
        ("float", ANSWERS["q2_megabytes"], 67.1, True),
        ("float", ANSWERS["q2_megabytes"], 67, True),  # the note's "67 MB"
        ("float", ANSWERS["q5_rnn_product"], 0.00573, True),
        ("float", ANSWERS["q5_rnn_product"], float("nan"), False),
        ("float", 1.0, True, False),
        ("bool", False, False, True),
        ("bool", False, np.False_, True),
        ("bool", False, 0, False),  # 0 and 1 are not booleans
        ("choice", "B", "b", True),
        ("choice", "B", " B ", True),
        ("choice", "B", "A", False),
        ("choice", "B", 2, False),
        ("int_dict", sorted(ANSWERS["q9_scores"].items()), {32: 1024, 512: 262144, 4096: 16777216}, True),
        ("int_dict", sorted(ANSWERS["q9_scores"].items()), {"32": 1024, "512": 262144.0, "4096": 16777216}, True),
        ("int_dict", sorted(ANSWERS["q9_scores"].items()), {32: 1024, 512: 262144}, False),
        ("int_dict", sorted(ANSWERS["q9_scores"].items()), [1024, 262144, 16777216], False),
    ],
)
def test_contract_type_rules(kind, expected, value, ok):
    assert check_answer(kind, expected, describe(value), "ABCD")[0] is ok


def test_messages_never_reveal_the_answer():
    for kind, expected, wrong in [("int", 16777216, 1), ("float", 0.016423203268260675, 0.017), ("choice", "C", "A"),
                                  ("float", 0.9 ** 49, 0.0)]:
        passed, message = check_answer(kind, expected, describe(wrong), "ABCD")
        assert not passed and message
        assert str(expected) not in message
        if isinstance(expected, float):
            assert f"{expected:.3g}" not in message and f"{expected:.2e}" not in message


def test_scalar_messages_give_direction_and_power_of_ten():
    assert typerules.order_of_magnitude(1.0, 0.0164) == "too large by about 10^2"
    assert typerules.order_of_magnitude(0.0164, 0.0164 * 0.9) == "too large, by less than a factor of ten"
    assert "too small by about 10^6" in check_answer("int", 16777216, describe(16), "")[1]


def test_describe_keeps_types_apart_and_plain():
    class Sneaky(float):
        def __eq__(self, other):
            return True

    assert describe(Sneaky(0.5)) == {"t": "float", "v": 0.5}  # a plain float: its __eq__ never reaches the grader
    assert describe(True)["t"] == "bool" and describe(np.int32(3)) == {"t": "int", "v": 3}
    assert describe(...)["t"] == "ellipsis" and describe(object())["t"] == "other"
    assert describe(10 ** 1000)["t"] == "other" and describe(10 ** 5000)["t"] == "other"  # no unbounded integers on the wire


SDPA = "torch.nn.functional.scaled_dot_product_attention"
MHA = "torch.nn.MultiheadAttention"
FORBIDDEN = [SDPA, MHA, "attn_ref"]
IMPORTS = "import torch\nimport torch.nn.functional as F\nfrom functools import partial"


@pytest.mark.parametrize(
    "cells, expected",
    [
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v)"], [SDPA]),
        (["from torch.nn.functional import scaled_dot_product_attention as fast",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return fast(q, k, v)"], [SDPA]),
        (["def helper(q, k, v):\n    return getattr(torch.nn.functional, 'scaled_dot_product_attention')(q, k, v)",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return helper(q, k, v)"], [SDPA]),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    import attn_ref\n    return attn_ref.scaled_dot_product_attention(q, k, v)"], [SDPA, "attn_ref"]),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    m = torch.nn.MultiheadAttention(4, 1)\n    return m(q, k, v)"], [MHA]),
        # below the Python API, and hidden from a naive parser
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    return torch.ops.aten._scaled_dot_product_attention_math(q, k, v)"], [SDPA]),
        (["fast = lambda q, k, v: F.scaled_dot_product_attention(q, k, v)",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return fast(q, k, v), None"], [SDPA]),
        (["fast = partial(F.scaled_dot_product_attention, dropout_p=0.0)",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return fast(q, k, v), None"], [SDPA]),
        (["ops = torch.ops.aten", "alias = ops._scaled_dot_product_flash_attention_for_cpu",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return alias(q, k, v)[0], None"], [SDPA]),
        (["%%capture\nkernels = {'fast': F.scaled_dot_product_attention}",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return kernels['fast'](q, k, v), None"], [SDPA]),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    f = getattr(F, 'scaled_dot' + '_product_attention')\n    return f(q, k, v), None"], [SDPA]),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    op = torch._C._get_operation_overload('aten::_scaled_dot_product_efficient_attention', '')\n    return op, None"], [SDPA]),
        # never the student's own names
        (["%timeit x = 1\n!ls\ndef scaled_dot_product_attention(q, k, v, mask=None):\n    return (q @ k.mT).softmax(-1) @ v, None"], []),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    '''Like F.scaled_dot_product_attention, by hand.'''\n    return q, k"], []),
        (["x = F.scaled_dot_product_attention(q, k, v)  # comparing in an exploration cell is fine",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return q, k"], []),
        (["def multi_head_attention(x):\n    return x", "def scaled_dot_product_attention_scores(q, k):\n    return q @ k.mT",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    s = scaled_dot_product_attention_scores(q, k)\n    return multi_head_attention(s), s"], []),
        (["from torch.nn.functional import scaled_dot_product_attention",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    w = torch.softmax(q @ k.mT / q.shape[-1] ** 0.5, -1)\n    return w @ v, w"], []),
    ],
)
def test_forbidden_calls_in_a_task_and_what_it_reaches(cells, expected):
    assert forbidden_uses([IMPORTS, *cells], "scaled_dot_product_attention", FORBIDDEN) == sorted(expected)


def test_self_attention_may_call_the_students_own_sdpa():
    cells = [IMPORTS, "def scaled_dot_product_attention(q, k, v, mask=None):\n    return q, k",
             "def self_attention(x, W_q, W_k, W_v, causal=True):\n    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)"]
    assert forbidden_uses(cells, "self_attention", FORBIDDEN) == []


def test_static_analysis_grows_linearly_with_a_notebooks_code():
    """Ten times the code costs about ten times the time, not a hundred (a quadratic walk would): the two sizes are
    timed in one run, each at its best of two, so a loaded machine slows both alike."""
    import time

    def seconds(functions: int) -> float:
        body = "\n".join(f"def f{i}(x):\n    return x * {i}" for i in range(functions))
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            analyse([IMPORTS, body, "def scaled_dot_product_attention(q, k, v, mask=None):\n    return f3(q), k"],
                    {"c3": ("scaled_dot_product_attention", FORBIDDEN)})
            best = min(best, time.perf_counter() - start)
        return best

    small, large = seconds(1_000), seconds(10_000)  # ~25 kB and ~0.25 MB of code
    assert large / small < 40, f"{small:.2f} s for 1,000 functions, {large:.2f} s for 10,000"


@pytest.mark.parametrize("source, skipped", [('grader.check("q4")', True), ("grader.export(pdf=False)", True),
                                             ('grader.check("q4")\nq4_ratio = 16', False), ("x = 1", False),
                                             ("def f(x):\n    return x\ngrader.export(pdf=False)", False),
                                             # the export cell of a notebook with written parts, whose module is
                                             # not in the graded kernel's folder; a student's own export() runs
                                             ("# Save first.\nfrom export_written import export\n\nexport(grader, pdf=False)", True),
                                             ("from export_written import export\nexport(grader)\nx = 1", False),
                                             ("export(grader, pdf=False)", False),
                                             ("from export_written import export as e\ne(grader)", False),
                                             ("from mine import export\nexport(grader)", False)])
def test_bare_grader_calls_are_skipped(source, skipped):
    assert is_otter_call(source) is skipped


# ---- files the kernel writes ---------------------------------------------------------------------

def test_replies_are_plain_private_bounded_files(tmp_path):
    (tmp_path / "ok.json").write_text("{}")
    assert read_reply(tmp_path, "ok.json") == b"{}"
    assert read_reply(tmp_path, "ok.json", owner=os.getuid()) == b"{}"
    with pytest.raises(UnsafeReply):
        read_reply(tmp_path, "ok.json", owner=os.getuid() + 1)  # not the kernel's file
    os.symlink("/dev/zero", tmp_path / "zero.json")
    os.symlink(tmp_path / "ok.json", tmp_path / "link.json")
    os.link(tmp_path / "ok.json", tmp_path / "hard.json")  # two names: could be a root-only file
    (tmp_path / "big.npy").write_bytes(b"0" * 2048)
    for name in ("zero.json", "link.json", "hard.json", "big.npy", "../ok.json"):
        with pytest.raises((UnsafeReply, OSError)):
            read_reply(tmp_path, name, limit=1024)


def test_a_fifo_reply_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "reply.json")
    done = []

    def read():
        try:
            read_reply(tmp_path, "reply.json")
        except UnsafeReply:
            done.append("refused")

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(5)
    assert done == ["refused"]


# ---- forged replies --------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    b"", b"null", b"[]", b'{"ok": true}', b'{"protocol": 1, "ok": "yes"}',
    b'{"protocol": 1, "ok": true, "form": "tuple", "count": 0, "outputs": []}',  # "ok" with nothing
    b'{"protocol": 1, "ok": true, "form": "tuple", "count": 1, "outputs": []}',  # short
    b'{"protocol": 1, "ok": true, "form": "single", "count": 2, "outputs": [{"kind": "other"}, {"kind": "other"}]}',
    b'{"protocol": 1, "ok": true, "form": "single", "count": 1, "outputs": [{"kind": "tensor", "dtype": "object", "device": "cpu", "shape": [], "file": "out0.npy"}]}',
    b'{"protocol": 1, "ok": true, "form": "single", "count": 1, "outputs": [{"kind": "tensor", "dtype": "float64", "device": "cpu", "shape": [2], "file": "../../checks.json"}]}',
    b'{"protocol": 1, "ok": true, "form": "single", "count": 1, "outputs": [{"kind": "scalar", "value": {"t": "float", "v": "0.5"}}]}',
    b"[" * 100000,
])
def test_forged_or_broken_replies_are_malformed_or_empty(reply):
    try:
        parsed = parse_call_reply(reply)
    except MalformedReply:
        return
    assert parsed.count == len(parsed.outputs) == 0  # "ok" with no outputs: accepted as data, scored as such


def test_forged_values_read_as_missing():
    names = ["q4_ratio", "q7_changes_training_cost"]
    forged = json.dumps({"protocol": 1, "values": {"q4_ratio": {"t": "int", "v": True}, "q7_changes_training_cost": "False",
                                                   "extra": {"t": "int", "v": 1}}}).encode()
    assert parse_values(forged, names) == {name: {"t": "missing"} for name in names}


# ---- the tolerance model -------------------------------------------------------------------------

def test_tolerance_is_relative_to_the_tensors_scale_and_messages_hide_values():
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((4, 5))
    ok, _ = compare_array("out", ref * (1 + 3e-8), ref, 1e-5, 1e-5, "float64 on cpu", {})  # float32-rounded constant
    assert ok
    ok, _ = compare_array("out", ref.astype(np.float32).astype(np.float64), ref, 1e-5, 1e-5, "float64 on cpu", {})
    assert ok
    ok, message = compare_array("out", np.zeros_like(ref), ref, 1e-5, 1e-5, "float64 on cpu", {})
    assert not ok and "= 1e+00" in message and "float64 on cpu" in message
    assert f"{np.abs(ref).max():.2e}" not in message and f"{np.abs(ref).max():.1e}" not in message
    ok, message = compare_array("out", ref * 1.23456, ref, 1e-5, 1e-5, "float64 on cpu", {})
    assert not ok and "= 2e-01" in message and "2.3e-01" not in message  # one significant digit: few bits per line


def test_the_share_of_its_tolerance_a_comparison_used_says_how_far_a_verdict_is_from_tipping():
    """stats["tolerance_used"] (the seed sweep's margin): at most 1 on a pass, above 1 on a miss of values, the
    largest share any entry took; an exact zero against a zero reference uses none of it."""
    ref = np.array([[1.0, -2.0], [0.0, 4.0]])
    for factor, ok_wanted in ((1 + 4e-6, True), (1 + 1.9e-5, True), (1 + 3e-5, False), (2.0, False)):
        stats: dict = {}
        ok, _ = compare_array("out", ref * factor, ref, 1e-5, 1e-5, "", stats)
        allowed = 1e-5 * np.abs(ref) + 1e-5 * 4.0
        assert ok is ok_wanted and stats["tolerance_used"] == pytest.approx(np.max(np.abs(ref * factor - ref) / allowed))
        assert (stats["tolerance_used"] <= 1) is ok_wanted
    stats = {}
    assert compare_array("out", np.zeros((2, 2)), np.zeros((2, 2)), 1e-5, 1e-5, "", stats)[0] and stats["tolerance_used"] == 0
    stats = {}
    assert not compare_array("out", np.full((2, 2), 1e-300), np.zeros((2, 2)), 1e-5, 1e-5, "", stats)[0]
    assert stats["tolerance_used"] == np.inf  # no tolerance at all where the reference is all zeros


# ---- meta tensors have no values -----------------------------------------------------------------

_FAILED_READING_VALUES = {"protocol": 1, "ok": False, "error": "RuntimeError: Tensor.item() cannot be called on meta tensors"}


@pytest.mark.parametrize("device, flagged, passes", [
    ("meta", True, True),    # an `if` on a tensor: sound code that meta tensors cannot run; not a device bug
    ("meta", False, False),  # any other failure on meta tensors is one
    ("cpu", True, False),    # the flag means nothing off meta: a failed call fails
])
def test_reading_values_of_meta_tensors_is_no_evidence_of_a_device_bug(tmp_path, device, flagged, passes):
    from attn_ref.grade.scoring.comparators import Observation, check_probe

    raw = dict(_FAILED_READING_VALUES, **({"meta_values_read": True} if flagged else {}))
    reply = parse_call_reply(json.dumps(raw).encode())
    assert reply.meta_values_read is flagged
    task = FunctionUnit("c3", framework="torch", outputs=("out", "weights"))
    probe = Probe("p", 1, dtype="float64", device=device)
    ok, message = check_probe(task, probe, [], None, Observation(reply, tmp_path, None))
    assert ok is passes
    assert ("not checked" in message) if passes else ("meta tensors" in message)


def test_only_an_earlier_function_that_lost_points_is_stood_in_for():
    from attn_ref.grade.results import TestResult
    from attn_ref.grade.scoring.functions import replaced, stand_ins

    units = {"c3": FunctionUnit("c3", function="scaled_dot_product_attention",
                                substitute="def scaled_dot_product_attention(...): ..."),
             "c4": FunctionUnit("c4", function="causal_mask", substitute="def causal_mask(...): ...")}
    c5 = FunctionUnit("c5", builds_on=("c3", "c4"))
    graded = [TestResult("c3: Scaled dot-product attention", score=10, max_score=10),
              TestResult("c4: A causal mask", score=8, max_score=10)]
    lost = replaced(c5, units, graded)
    assert lost == ["c4"]  # the student's own c3 (extra parameters and all) stays bound
    assert stand_ins(units, lost) == {"causal_mask": units["c4"].substitute}


@pytest.mark.parametrize("miss, hinted", [(1e-3, True), (0.3, False)])
def test_the_precision_hint_is_given_only_for_a_miss_the_size_of_rounding(tmp_path, miss, hinted):
    """float32 internals miss c3's precision line by 1e-4 to 2e-3; a wrong formula (d for √d, the wrong axis) by
    0.2 or more, and was told to look at float32 and the max subtraction."""
    from attn_ref.grade.scoring.comparators import Observation, check_probe

    reference = np.linspace(1.0, 2.0, 6).reshape(2, 3)
    np.save(tmp_path / "out0.npy", reference * (1 + miss), allow_pickle=False)
    reply = {"protocol": 1, "ok": True, "form": "single", "count": 1,
             "outputs": [{"kind": "ndarray", "dtype": "float64", "device": "cpu", "shape": [2, 3], "file": "out0.npy"}]}
    obs = Observation(parse_call_reply(json.dumps(reply).encode()), tmp_path, None)
    task = FunctionUnit("c1", framework="numpy", outputs=("out",))
    ok, message = check_probe(task, Probe("p", 1, checks=("precision_kept",)), [], [reference], obs)
    assert not ok and "differs from the reference" in message
    assert ("float32 arithmetic" in message) is hinted


def test_a_dtype_the_saved_values_do_not_have_is_malformed(tmp_path):
    """A reply that calls float64 values float32 (an ndarray subclass with a lying dtype) fails the dtype probe."""
    from attn_ref.grade.scoring.comparators import Observation, check_probe

    np.save(tmp_path / "out0.npy", np.ones((2, 3)), allow_pickle=False)  # float64 on disk
    claim = {"protocol": 1, "ok": True, "form": "single", "count": 1,
             "outputs": [{"kind": "ndarray", "dtype": "float32", "device": "cpu", "shape": [2, 3], "file": "out0.npy"}]}
    obs = Observation(parse_call_reply(json.dumps(claim).encode()), tmp_path, None)
    task = FunctionUnit("c1", framework="numpy", outputs=("out",))
    probe = Probe("p", 1, checks=("dtype_kept",), dtype="float32")
    ok, message = check_probe(task, probe, [], None, obs)
    assert not ok and "do not match its description" in message


# ---- points need real evidence ---------------------------------------------------------------------

def _lab_autograder():
    from course_units import assignment

    from attn_ref.grade.scoring.autograder import Autograder
    from attn_ref.release.hidden_checks import checks

    return Autograder(Path("."), checks(assignment("lab")))


def _sent(autograder, task: str, name: str | None = None, seed: int = 0):
    """(probe, inputs, reference outputs) of a lab probe (default: the task's first, a general case), as a
    grading makes them."""
    from attn_ref.grade.scoring.inputs import generate, probe_rng, reference_outputs

    t_index, unit = next((i, u) for i, u in enumerate(autograder.units) if u.name == task)
    p_index, probe = next((i, p) for i, p in enumerate(unit.probes) if name in (None, p.name))
    args = generate(probe, probe_rng(seed, t_index, p_index))
    return probe, args, reference_outputs(autograder.reference(unit.reference), args)


# The lab's value probes whose inputs make the answer trivial; every other value probe is evidence.
DEGENERATE = {("c2", "one encoder state: weight 1 and context = that state"), ("c4", "T = 1"),
              ("c6", "a single token (T = 1)"), ("c7", "window = 1: each token sees only itself"),
              ("c8", "T = 1: no steps, gradient 1")}


@pytest.mark.parametrize("seed", [0, 7])
def test_exactly_the_degenerate_value_probes_are_passed_by_a_placeholder(seed):
    """A single key (the key itself, weight 1), a single token (x @ W_v), T = 1 (1, [[True]]), a window of 1 (the
    identity): each is passed by code that does none of the task, decided on the inputs actually sent."""
    from attn_ref.grade.scoring.evidence import compares_values, placeholder_passes

    autograder = _lab_autograder()
    passed = {(unit.name, probe.name) for unit in autograder.units for probe in unit.probes
              if compares_values(probe) and placeholder_passes(*_sent(autograder, unit.name, probe.name, seed))}
    assert passed == DEGENERATE


@pytest.mark.parametrize("task, name, stub", [
    ("c2", "one encoder state: weight 1 and context = that state",
     lambda a: [a["keys"].mean(axis=0), np.full(len(a["keys"]), 1 / len(a["keys"]))]),
    ("c6", "a single token (T = 1)", lambda a: [a["x"] @ a["W_v"]]),
    ("c8", "T = 1: no steps, gradient 1", lambda a: [float(a["T"])]),
])
def test_the_stubs_of_the_issue_are_in_the_placeholder_family(task, name, stub):
    """The stub passes the degenerate probe for real (the scorer's own comparison), the family sees it, and
    the task's general case is evidence."""
    from attn_ref.grade.scoring.comparators import compare_array, scalar_error, scalar_rtol, tolerance
    from attn_ref.grade.scoring.evidence import is_evidence

    autograder = _lab_autograder()
    probe, args, reference = _sent(autograder, task, name)
    for got, ref in zip(stub({a.name: a.data for a in args}), reference):
        if isinstance(ref, np.ndarray):
            assert compare_array("out", np.asarray(got), ref, *tolerance(probe), "", {})[0]
        else:
            assert scalar_error(got, ref) <= scalar_rtol(probe)
    assert not is_evidence(probe, args, reference)
    assert is_evidence(*_sent(autograder, task))


def test_a_line_a_placeholder_passes_is_credited_only_beside_evidence_that_matched():
    from attn_ref.grade.scoring.evidence import credit

    lines = [(False, "general case", 4, "differs"), (True, "one key", 2, ""), (True, "sums to 1", 2, ""), (True, "device", 1, "")]
    evidence = {0: True, 1: False, 2: False}  # line 3 (a meta probe) has no verdict: it is no evidence
    credited = credit(lines, evidence)
    assert [ok for ok, *_ in credited] == [False, False, False, False]
    message = credited[1][3]
    assert "but not counted:" in message and "does none of the task" in message and "general cases" in message
    lines[0] = (True, "general case", 4, "")
    assert credit(lines, evidence) == lines
    lines[0] = (False, "general case", 4, "differs")
    assert credit(lines, {1: True, 2: False}) == lines  # an evidence line that passed credits the others


def test_evidence_is_worked_out_only_where_it_decides_a_credit():
    """Whether a line is evidence (placeholders tried on its inputs) is asked lazily: never of a line that failed,
    at most once of each, and of no line after a passed one that is evidence; the credits are as if every
    verdict had been worked out first."""
    from attn_ref.grade.scoring.evidence import credit

    asked: list[int] = []

    def verdict(i: int, value: bool):
        return lambda: asked.append(i) or value

    lines = [(False, "general", 4, "differs"), (True, "one key", 2, ""), (True, "random", 4, ""), (True, "sums to 1", 2, "")]
    lazy = {0: verdict(0, True), 1: verdict(1, False), 2: verdict(2, True), 3: verdict(3, False)}
    assert credit(lines, lazy) == credit(lines, {0: True, 1: False, 2: True, 3: False}) == lines
    assert asked == [1, 2]  # line 0 failed; line 3 was not needed once line 2 proved the task
    asked.clear()
    lines[2] = (False, "random", 4, "differs")
    credited = credit(lines, lazy)
    assert credited == credit(lines, {0: True, 1: False, 2: True, 3: False})
    assert [ok for ok, *_ in credited] == [False, False, False, False]
    assert asked == [1, 3]  # each passed line asked once, though the list is read twice


def test_a_task_without_evidence_is_found_with_its_name():
    """check's question: with only its degenerate probe, c6 could never give correct work its points."""
    from attn_ref.grade.scoring.evidence import tasks_without_evidence

    autograder = _lab_autograder()
    assert tasks_without_evidence(autograder, range(3)) == {}
    c6 = autograder.checks.unit("c6")
    c6 = replace(c6, probes=tuple(p for p in c6.probes if p.name == "a single token (T = 1)" or p.device == "meta"))
    autograder.checks = replace(autograder.checks, units=tuple(c6 if u.name == "c6" else u for u in autograder.units))
    assert tasks_without_evidence(autograder, range(3)) == {"c6": 3}


def test_student_text_is_plain_bounded_and_encodable():
    from attn_ref.grade.inkernel.text import cap

    text = cap("ok\ud800 \x1b[2J\x1b]0;title\x07 line\r\nnext\ttab" * 100, 60)
    text.encode("utf-8")  # a lone surrogate would raise here
    assert len(text) == 60 and "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\n" not in text and "\t" not in text  # one line: it can never begin one of the grader's (text.py)


def test_a_known_wrong_answer_is_told_what_it_means_and_nothing_else_changes():
    from attn_ref.grade.scoring.comparators import check_answer

    slip = ((0.017, "that is the note's printed 0.017"),)
    assert check_answer("float", 0.016423, {"t": "float", "v": 0.017}, mistakes=slip) == (False, "that is the note's printed 0.017")
    assert check_answer("float", 0.016423, {"t": "float", "v": 0.0164}, mistakes=slip)[0]  # the answer still passes
    ok, message = check_answer("float", 0.016423, {"t": "float", "v": 0.02}, mistakes=slip)
    assert not ok and "printed" not in message  # another wrong value gets the usual direction
    with pytest.raises(ValueError, match="not accepted as the answer"):
        from attn_ref.release.units import Answer
        Answer("q", "float", 0.016423, mistakes=((0.01643, "too close"),))


@pytest.mark.parametrize("output, passes, note", [
    ({"kind": "scalar", "value": {"t": "float", "v": 0.25}, "form": "python"}, True, ""),
    ({"kind": "scalar", "value": {"t": "float", "v": 0.25}, "form": "numpy"}, True, "accepted as a NumPy number"),
    ({"kind": "scalar", "value": {"t": "float", "v": 0.25}, "form": "tensor"}, True, "accepted as a 0-d tensor"),
    ({"kind": "scalar", "value": {"t": "float", "v": -0.25}, "form": "python"}, False, "right but for its sign"),
    ({"kind": "scalar", "value": {"t": "float", "v": 0.0}, "form": "python"}, False, ".detach()"),
    ({"kind": "tensor", "dtype": "float64", "device": "cpu", "shape": [1], "file": "out0.npy"}, False, "shape (1,)"),
])
def test_one_rule_for_a_returned_number(tmp_path, output, passes, note):
    """c8 returns a Python float; a NumPy float or a 0-d tensor passes with a note (the public check's rule
    too), a 1-element tensor does not; a 0 and a flipped sign say what to look at, never the value."""
    from attn_ref.grade.scoring.comparators import Observation, check_probe

    np.save(tmp_path / "out0.npy", np.array([0.25]), allow_pickle=False)
    reply = parse_call_reply(json.dumps({"protocol": 1, "ok": True, "form": "single", "count": 1, "outputs": [output]}).encode())
    task = FunctionUnit("c8", framework="torch", outputs=("norm",))
    probe = Probe("p", 1)
    ok, message = check_probe(task, probe, [], [0.25], Observation(reply, tmp_path, None))
    assert ok is passes and note in message and "0.25" not in message


def test_probe_sizes_are_drawn_per_seed_within_their_ranges_and_kept_apart():
    from attn_ref.grade.checks_json import InvalidChecks, Probe
    from attn_ref.grade.scoring.inputs import generate, probe_rng
    from attn_ref.release.units import drawn, normal

    spec = Probe("p", 1, (("q", normal("T_q", "d")), ("k", normal("T_k", "d"))),
                        options=drawn(T_q=(2, 4), T_k=(2, 4), d=(1, 3), distinct=(("T_q", "T_k"),))).to_json()
    probe = Probe.from_json(spec, "p", None, None)
    shapes = {tuple(a.data.shape for a in generate(probe, probe_rng(seed, 0, 0))) for seed in range(40)}
    assert all(q[0] != k[0] and q[1] == k[1] and 2 <= q[0] <= 4 and 1 <= q[1] <= 3 for q, k in shapes)
    assert len(shapes) > 5  # they vary with the seed
    assert [a.data.shape for a in generate(probe, probe_rng(7, 0, 0))] == [a.data.shape for a in generate(probe, probe_rng(7, 0, 0))]
    spec["args"][0][1]["normal"] = ["T_q", "width"]
    with pytest.raises(InvalidChecks, match="names of options.dims"):
        Probe.from_json(spec, "p", None, None)
    spec["args"][0][1]["normal"] = ["T_q", "d"]
    spec["options"]["dims"]["T_k"] = [2, 2]
    spec["options"]["dims"]["T_q"] = [2, 2]
    with pytest.raises(InvalidChecks, match="too narrow"):
        Probe.from_json(spec, "p", None, None)
    spec["options"]["dims"] = {"T_q": [2, 3], "T_k": [2, 3], "d": [1, 3]}
    spec["options"]["distinct"] = [["T_q", "T_k", "d"]]  # a span of three sizes, but T_q and T_k take 2 and 3
    Probe.from_json(spec, "p", None, None)
    spec["options"]["dims"]["d"] = [2, 3]
    with pytest.raises(InvalidChecks, match="too narrow"):
        Probe.from_json(spec, "p", None, None)


def test_drawn_sizes_all_differ_unless_the_instructor_groups_them():
    from attn_ref.grade.checks_json import Probe
    from attn_ref.grade.scoring.inputs import draw_dims, probe_rng
    from attn_ref.release.units import drawn

    every = drawn(B=(1, 3), T=(3, 9), d_model=(2, 8), d_k=(2, 3), d_v=(5, 6))
    assert every["distinct"] == [["B", "T", "d_model", "d_k", "d_v"]]
    probe = Probe.from_json(Probe("p", 1, options=every).to_json(), "p", None, None)
    draws = [draw_dims(probe, probe_rng(seed, 0, 0)) for seed in range(200)]
    assert all(len(set(sizes.values())) == 5 for sizes in draws)
    assert drawn(T_q=(2, 4), T_k=(2, 4), distinct=())["dims"] and "distinct" not in drawn(T_q=(2, 4), T_k=(2, 4), distinct=())
    free = Probe.from_json(Probe("p", 1, options=drawn(T_q=(2, 3), T_k=(2, 3), distinct=())).to_json(), "p", None, None)
    assert any(len(set(draw_dims(free, probe_rng(seed, 0, 0)).values())) == 1 for seed in range(50))  # may coincide


def test_a_probe_is_seed_free_only_when_nothing_of_its_inputs_is_drawn():
    from attn_ref.grade.checks_json import Probe
    from attn_ref.grade.scoring.inputs import generate, probe_rng, seed_free
    from attn_ref.release.units import drawn, normal, value

    def probe(args, **options):
        return Probe.from_json(Probe("p", 1, args, options=options).to_json(), "p", None, None)

    fixed = probe((("T", value(5)),))
    assert seed_free(fixed)
    assert [a.data for a in generate(fixed, probe_rng(0, 0, 0))] == [a.data for a in generate(fixed, probe_rng(9, 0, 0))]
    assert not seed_free(probe((("x", normal(4, 3)),)))  # values drawn
    assert not seed_free(probe((("x", normal("T", 3)),), **drawn(T=(2, 5))))  # sizes drawn
