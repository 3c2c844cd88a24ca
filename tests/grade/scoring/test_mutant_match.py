"""Naming a known mistake (scoring/mutant_match.py): the student's call must look like the mutant's to the probe in
everything it measures (values, dtype, device, shape, inputs written into, projection counts, autograd), the
mutant's unlike the reference's; an error names a mistake only when one mistake's mutants raise it, with sizes; the mutant written for the probe is preferred, and two mistakes that explain a line equally name none."""

from __future__ import annotations

import itertools
import json
import sys

import numpy as np

from attn_ref.grade.checks_json import FunctionUnit, Mistake, Probe
from attn_ref.grade.inkernel.wire import PROTOCOL, parse_call_reply
from attn_ref.grade.scoring.comparators import Observation
from attn_ref.grade.scoring.functions import call_files
from attn_ref.grade.scoring.inputs import Input
from attn_ref.grade.scoring.mutant_match import MistakeRunner, error_could_name, line_match, matching

_folders = itertools.count()
X = np.arange(6.0).reshape(2, 3)
REFERENCE = [np.exp(X) / np.exp(X).sum(axis=-1, keepdims=True)]
SENT = [Input("x", "array", X, False, False)]


def _saved(folder, name, value, device="cpu"):
    value = np.asarray(value)
    desc = {"kind": "ndarray", "dtype": str(value.dtype), "device": device, "shape": list(value.shape), "file": None}
    if device != "meta":
        np.save(folder / name, value, allow_pickle=False)
        desc["file"] = name
    return desc


def observed(tmp_path, *outputs, inputs_after=None, error="", device="cpu", **extra) -> Observation:
    """An Observation as the harness would have written it, for the student or a mutant."""
    folder = tmp_path / f"call{next(_folders)}"
    folder.mkdir()
    if error:
        reply = {"protocol": PROTOCOL, "ok": False, "error": error}
    else:
        reply = {"protocol": PROTOCOL, "ok": True, "form": "single", "count": len(outputs),
                 "outputs": [_saved(folder, f"out{i}.npy", o, device) for i, o in enumerate(outputs)], **extra}
        if inputs_after is not None:
            reply["inputs_after"] = [_saved(folder, f"in{i}.npy", a) for i, a in enumerate(inputs_after)]
    return Observation(parse_call_reply(json.dumps(reply).encode()), folder, None)


def task_with(*mistakes: tuple[str, str]) -> FunctionUnit:
    return FunctionUnit("c1", function="softmax", outputs=("out",),
                        mistakes=tuple(Mistake(says, f"# mutant: {says}\n{header}def softmax(x):\n    ...\n")
                                       for says, header in mistakes))


def test_a_dtype_mistake_is_named_by_the_dtype_and_the_values(tmp_path):
    probe = Probe("float64 in, float64 out", 1, checks=("dtype_kept", "matches_reference"))
    task = task_with(("computes in float32", ""))
    low = REFERENCE[0].astype(np.float32)
    mutant = {0: observed(tmp_path, low)}
    assert matching(task, probe, SENT, REFERENCE, observed(tmp_path, low), mutant) == "computes in float32"
    # float16 out is another mistake; the right float64 values are not this one either
    assert matching(task, probe, SENT, REFERENCE, observed(tmp_path, REFERENCE[0].astype(np.float16)), mutant) == ""
    assert matching(task, probe, SENT, REFERENCE, observed(tmp_path, REFERENCE[0] + 1.0), mutant) == ""


def test_writing_into_the_input_is_named_by_the_inputs_after_the_call(tmp_path):
    probe = Probe("leaves its input unchanged", 1, checks=("inputs_unchanged", "matches_reference"))
    task = task_with(("writes into its input", ""))
    mutant = {0: observed(tmp_path, REFERENCE[0], inputs_after=[REFERENCE[0]])}
    same = observed(tmp_path, REFERENCE[0], inputs_after=[REFERENCE[0]])
    other = observed(tmp_path, REFERENCE[0], inputs_after=[np.zeros_like(X)])
    assert matching(task, probe, SENT, REFERENCE, same, mutant) == "writes into its input"
    assert matching(task, probe, SENT, REFERENCE, other, mutant) == ""  # written into, but not the same way


def test_a_mutant_the_reference_agrees_with_names_nothing(tmp_path):
    probe = Probe("matches the reference", 1)
    task = task_with(("a right answer", ""))
    wrong = observed(tmp_path, REFERENCE[0] * 2)
    assert matching(task, probe, SENT, REFERENCE, wrong, {0: observed(tmp_path, REFERENCE[0])}) == ""


def test_an_error_names_a_mistake_only_when_the_mutants_of_one_marked_mistake_alone_raise_it(tmp_path):
    probe = Probe("matches the reference", 1)
    task = task_with(("a shape mistake", "# its error names it\n"), ("another shape mistake", "# its error names it\n"),
                     ("a stub", "# stub\n"), ("unmarked", ""))
    error = "RuntimeError: The size of tensor a (6) must match the size of tensor b (8)"
    other = "RuntimeError: The size of tensor a (6) must match the size of tensor b (5)"

    def named(student: str, *mutant_errors: str) -> str:
        mutants = {i: observed(tmp_path, error=e) for i, e in enumerate(mutant_errors) if e}
        return matching(task, probe, SENT, REFERENCE, observed(tmp_path, error=student), mutants)

    assert named(error, error, other) == "a shape mistake"
    assert named(error, other, other) == ""  # another error: another pair of dimensions met
    assert named(error, error, error) == ""  # two mistakes raise it: the error does not say which
    assert named(error, "", "", error) == ""  # a stub names nothing
    assert named(error, "", "", "", error) == ""  # nor a mutant whose clash the instructor did not mark as its own
    sizeless = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, meta and cpu!"
    assert named(sizeless, sizeless) == "a shape mistake"  # the instructor's marker decides, not the message's numbers
    assert named(sizeless, "", "", "", sizeless) == ""  # unmarked: the error of many mistakes


def test_the_mutants_need_not_run_for_an_error_none_of_them_could_name(tmp_path):
    """functions._known_mistake leaves the mutants' process unstarted where ``error_could_name`` is False: it must
    be False exactly where matching would name nothing whatever the mutants raised."""
    marked = task_with(("a shape mistake", "# its error names it\n"), ("unmarked", ""))
    unmarked = task_with(("unmarked", ""), ("a stub", "# stub\n"))
    sized = "RuntimeError: The size of tensor a (6) must match the size of tensor b (8)"
    for error in (sized, "NotImplementedError", "RuntimeError: Expected all tensors to be on the same device"):
        for task in (marked, unmarked):
            student = observed(tmp_path, error=error)
            mutants = {i: observed(tmp_path, error=error) for i in range(1, len(task.mistakes))} | {0: observed(tmp_path, error=error)}
            if not error_could_name(task, student):
                assert matching(task, Probe("p", 1), SENT, REFERENCE, student, mutants) == ""
    assert error_could_name(marked, observed(tmp_path, error=sized))
    assert error_could_name(marked, observed(tmp_path, error="NotImplementedError"))  # whether one raises it too is for matching
    assert not error_could_name(unmarked, observed(tmp_path, error=sized))


def test_a_device_mistake_on_meta_compares_devices_and_shapes(tmp_path):
    probe = Probe("stays on the inputs' device (meta tensors)", 1, checks=("device_kept",), device="meta")
    task = FunctionUnit("c4", function="causal_mask", framework="torch", outputs=("mask",),
                        mistakes=(Mistake("mask built on the CPU", "def causal_mask(T, device=None):\n    ...\n"),))
    mask = np.tril(np.ones((4, 4), dtype=bool))
    reference = [mask]

    def tensor(tmp_path, value, device):
        obs = observed(tmp_path, value, device=device)
        outputs = tuple(type(o)(**{**o.__dict__, "kind": "tensor"}) for o in obs.reply.outputs)
        return Observation(type(obs.reply)(**{**obs.reply.__dict__, "outputs": outputs}), obs.outbox, None)

    mutant = {0: tensor(tmp_path, mask, "cpu")}
    assert matching(task, probe, [], reference, tensor(tmp_path, mask, "cpu"), mutant) == "mask built on the CPU"
    assert matching(task, probe, [], reference, tensor(tmp_path, mask[:3, :3], "cpu"), mutant) == ""


def test_the_mutant_written_for_the_probe_is_preferred_and_a_stub_comes_last(tmp_path):
    probe = Probe("logits of ±1e4 give no NaN or inf", 1, checks=("finite", "matches_reference"))
    task = task_with(("a stub", "# stub\n"), ("something else", "# must fail: axis\n"), ("no max shift", "# must fail: ±1e4\n"))
    nan = np.full_like(X, np.nan)
    mutants = {i: observed(tmp_path, nan) for i in range(3)}
    assert matching(task, probe, SENT, REFERENCE, observed(tmp_path, nan), mutants) == "no max shift"
    del mutants[2]
    assert matching(task, probe, SENT, REFERENCE, observed(tmp_path, nan), mutants) == "something else"


def test_a_mutant_keeping_state_between_calls_first_hears_the_tasks_calls_it_missed():
    """The mutants start at a grading's first failed probe; one marked as keeping state between calls is first
    called on the task's calls before it (and any passed since), so a module-level cache holds what the
    student's held; the others are called on the compared calls alone."""
    def counting(marker: str) -> str:
        return f"# mutant: counts its calls\n{marker}\n_calls = []\n\n\ndef softmax(x):\n    _calls.append(1)\n    return x * len(_calls)\n"

    task = FunctionUnit("c1", function="softmax", outputs=("out",),
                        mistakes=(Mistake("replayed", counting("# keeps state between calls")), Mistake("not", counting(""))))
    probe = Probe("matches the reference", 1)

    def files(scale: float) -> dict[str, bytes]:
        return call_files(task, probe, [Input("x", "array", X * scale, False, False)], {})

    def out(found: dict, i: int) -> np.ndarray:
        return found[i].array(found[i].reply.outputs[0])

    runner = MistakeRunner(sys.executable, "import numpy as np\n")
    try:
        assert runner.heard(task) == 0
        second = runner.observations(task, files(2.0), [files(1.0)])  # the first call passed: replayed, unread
        assert runner.heard(task) == 2
        fourth = runner.observations(task, files(4.0), [files(3.0)])
        assert runner.heard(task) == 4
        assert np.array_equal(out(second, 0), X * 2.0 * 2)  # its second call
        assert np.array_equal(out(fourth, 0), X * 4.0 * 4)  # its fourth, not its second
        assert np.array_equal(out(fourth, 1), X * 4.0 * 2)  # unmarked: the compared calls alone
    finally:
        runner.close()

def test_each_mutant_gets_the_inputs_as_the_grader_wrote_them_though_another_wrote_into_its_own():
    """The runner reads a call's input files once for all the task's mutants (harness.shared_reads) and gives each
    its own copy: a mutant that writes into its input changes nothing another mutant, or the next call, sees."""
    writes = "# mutant: writes into its input\ndef softmax(x):\n    x += 100\n    return x\n"
    reads = "# mutant: returns its input\ndef softmax(x):\n    return x * 1\n"
    task = FunctionUnit("c1", function="softmax", outputs=("out",), mistakes=(Mistake("writes", writes), Mistake("reads", reads),
                                                                              Mistake("writes again", writes)))
    probe = Probe("matches the reference", 1)
    runner = MistakeRunner(sys.executable, "import numpy as np\n")
    try:
        for scale in (1, 2):  # a second call: nothing of the first call's reads is kept
            x = np.arange(6).reshape(2, 3) * scale  # integers: read as they are (floats are cast, which copies)
            found = runner.observations(task, call_files(task, probe, [Input("x", "array", x, False, False)], {}), [])
            outs = [found[i].array(found[i].reply.outputs[0]) for i in range(3)]
            assert np.array_equal(outs[0], x + 100) and np.array_equal(outs[2], x + 100)
            assert np.array_equal(outs[1], x)
    finally:
        runner.close()


def test_two_mistakes_that_explain_a_line_equally_name_none(tmp_path):
    """c4's T = 1: an inverse mask and a diagonal left out both return [[False]]; naming either may be false."""
    probe = Probe("logits of ±1e4 give no NaN or inf", 1, checks=("finite", "matches_reference"))
    nan = np.full_like(X, np.nan)
    student = observed(tmp_path, nan)
    equal = task_with(("no max shift", "# must fail: axis\n"), ("an inverse mask", "# must fail: axis\n"))
    assert matching(equal, probe, SENT, REFERENCE, student, {0: observed(tmp_path, nan), 1: observed(tmp_path, nan)}) == ""
    one_written_for_it = task_with(("no max shift", "# must fail: ±1e4\n"), ("an inverse mask", "# must fail: axis\n"))
    mutants = {0: observed(tmp_path, nan), 1: observed(tmp_path, nan)}
    assert matching(one_written_for_it, probe, SENT, REFERENCE, student, mutants) == "no max shift"
    same_words = task_with(("no max shift", "# must fail: axis\n"), ("no max shift", ""))
    assert matching(same_words, probe, SENT, REFERENCE, student, mutants) == "no max shift"  # two forms of one mistake


def test_a_name_another_failed_line_contradicts_is_not_told(tmp_path):
    """A float16 gradient underflows to 0 on one line, as a detached state's does on every line: on the other
    lines the detaching mutant fails too and returns something else, so that line's match was a coincidence."""
    probe = Probe("matches the reference", 1)
    task = task_with(("detaches the state", ""), ("a stub", "# stub\n"))
    zero, small = np.zeros_like(X), REFERENCE[0] * 0.5
    underflow = line_match(task, probe, SENT, REFERENCE, observed(tmp_path, zero), {0: observed(tmp_path, zero)})
    elsewhere = line_match(task, probe, SENT, REFERENCE, observed(tmp_path, small), {0: observed(tmp_path, zero)})
    assert underflow.says == "detaches the state" and "detaches the state" in elsewhere.unmatched
    assert underflow.contradicted_by([elsewhere])
    detached = line_match(task, probe, SENT, REFERENCE, observed(tmp_path, zero), {0: observed(tmp_path, zero)})
    assert not underflow.contradicted_by([detached])  # the same mistake on every line: told on each
    raised = line_match(task, probe, SENT, REFERENCE, observed(tmp_path, error="ValueError: no"), {0: observed(tmp_path, zero)})
    assert not underflow.contradicted_by([raised])  # a line the student's call raised on says nothing of its values
    mutant_raised = line_match(task, probe, SENT, REFERENCE, observed(tmp_path, small), {0: observed(tmp_path, error="E: x")})
    assert not underflow.contradicted_by([mutant_raised])  # nor one where the mutant raised: no values to differ
