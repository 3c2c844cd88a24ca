"""Attacks on the practice's answers: patched checkers, lying values, the reference imported, forged replies, shape-only stubs.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

import json

from hostile import BOTH, appended, attack, every_function_calls, notebook, replaced, visible_text
from placeholders import PLACEHOLDERS


def test_patched_otter_checker_changes_nothing(release, local):
    nb = appended(notebook(release, "practice", "blank"), """
import otter
from otter.test_files import ok_test
ok_test.run_doctest = lambda *args, **kwargs: (True, "")
otter.execute.checker.Checker.get_results = classmethod(lambda cls: [])
q4_scores_T8, q4_scores_T32, q4_ratio = 63, 1000, 15
""")
    results = local(nb, "practice")
    assert results["score"] == 0
    flags = "\n".join(results["extra_data"]["integrity_flags"])
    assert "replaces ok_test.run_doctest" in flags and "replaces otter.execute.checker.Checker.get_results" in flags


def test_values_that_lie_about_equality_are_read_as_plain_numbers(release, local):
    nb = appended(notebook(release, "practice", "blank"), """
class Yes(float):
    def __eq__(self, other):
        return True
    def __repr__(self):
        return open("tests/q8.py").read()
    __hash__ = float.__hash__
q8_product_39 = Yes(0.017)
q5_rnn_product = Yes(1.0)
q4_ratio = Yes(4.0)
""")
    results = local(nb, "practice")
    assert results["score"] == 0
    assert any("defines __eq__" in f for f in results["extra_data"]["integrity_flags"])


def test_importing_the_reference_scores_zero(release, local):
    """Seen in the code: every answer scores 0. Hidden from the parser: the student environment lacks it."""
    nb = appended(notebook(release, "practice", "solution"), "import attn_ref")
    results = local(nb, "practice")
    assert results["score"] == 0 and "attn_ref" in results["output"]
    hidden = "name = ''.join(reversed('srewsna.fer_ntta'))\nkey = __import__(name, fromlist=['ANSWERS']).ANSWERS\nglobals().update(key)"
    results = local(appended(notebook(release, "practice", "blank"), hidden), "practice")
    assert results["score"] == 0
    assert any("ImportError" in e or "ModuleNotFoundError" in e for e in results["extra_data"]["cell_errors"])


@BOTH
def test_forged_replies_score_no_more_than_a_blank_notebook(release, local, namespaces):
    forger = attack("forge_replies")
    lab = every_function_calls(appended(notebook(release, "lab", "blank"), forger), "take_over_the_harness()")
    results = local(lab, "lab", namespaces)
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    practice = appended(notebook(release, "practice", "blank"), forger, """
class Trigger:
    @property
    def shape(self):
        take_over_the_harness()
        return ()
q1_lstm_sequential_steps = Trigger()
""")
    assert local(practice, "practice", namespaces)["score"] == 0


@BOTH
def test_stubs_that_only_get_shapes_devices_and_sums_right_score_nothing(release, local, namespaces):
    """Probes of a property alone (the device of meta tensors, weights that sum to 1) earn points only
    next to a probe that matched the reference and that no placeholder passes; meta probes check shapes too."""
    stubs = {**PLACEHOLDERS["zeros"],  # and weights that sum to 1
             "def softmax(": "def softmax(x, axis=-1):\n    return np.full_like(x, 1.0 / x.shape[axis])",
             "def additive_attention(": "def additive_attention(query, keys, W_q, W_k, v):\n"
                                        "    return np.zeros(keys.shape[1]), np.full(keys.shape[0], 1.0 / keys.shape[0])"}
    nb = notebook(release, "lab", "blank")
    for marker, source in stubs.items():
        nb = replaced(nb, marker, source)
    results = local(nb, "lab", namespaces)
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    assert "but not counted:" in visible_text(results)
