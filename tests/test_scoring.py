"""The contract's type rules and tolerances, and the static checks, as plain functions (no kernel)."""

import numpy as np
import pytest

from attn_ref.answers import ANSWERS
from attn_ref.grade.harness import describe
from attn_ref.grade.scoring import check_answer
from attn_ref.grade.session import is_otter_call
from attn_ref.grade.static import forbidden_uses


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
    assert check_answer(kind, expected, describe(value))[0] is ok


def test_messages_never_reveal_the_answer():
    for kind, expected, wrong in [("int", 16777216, 1), ("float", 0.016423203268260675, 0.017), ("choice", "C", "A")]:
        passed, message = check_answer(kind, expected, describe(wrong))
        assert not passed and str(expected) not in message and message


def test_describe_keeps_types_apart_and_plain():
    class Sneaky(float):
        def __eq__(self, other):
            return True

    assert describe(Sneaky(0.5)) == {"t": "float", "v": 0.5}  # a plain float: its __eq__ never reaches the grader
    assert describe(True)["t"] == "bool" and describe(np.int32(3)) == {"t": "int", "v": 3}
    assert describe(...)["t"] == "ellipsis" and describe(object())["t"] == "other"


SDPA = "torch.nn.functional.scaled_dot_product_attention"
FORBIDDEN = [SDPA, "torch.nn.MultiheadAttention", "attn_ref"]


@pytest.mark.parametrize(
    "cells, expected",
    [
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v)"], [SDPA]),
        (["from torch.nn.functional import scaled_dot_product_attention as fast",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return fast(q, k, v)"], [SDPA]),
        (["def helper(q, k, v):\n    return getattr(torch.nn.functional, 'scaled_dot_product_attention')(q, k, v)",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return helper(q, k, v)"], [SDPA]),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    import attn_ref\n    return attn_ref.scaled_dot_product_attention(q, k, v)"], [SDPA, "attn_ref"]),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    m = torch.nn.MultiheadAttention(4, 1)\n    return m(q, k, v)"], ["torch.nn.MultiheadAttention"]),
        (["%timeit x = 1\n!ls\ndef scaled_dot_product_attention(q, k, v, mask=None):\n    return (q @ k.mT).softmax(-1) @ v, None"], []),
        (["def scaled_dot_product_attention(q, k, v, mask=None):\n    '''Like F.scaled_dot_product_attention, by hand.'''\n    return q, k"], []),
        (["x = F.scaled_dot_product_attention(q, k, v)  # comparing in an exploration cell is fine",
          "def scaled_dot_product_attention(q, k, v, mask=None):\n    return q, k"], []),
    ],
)
def test_forbidden_calls_in_a_task_and_what_it_reaches(cells, expected):
    assert forbidden_uses(cells, "scaled_dot_product_attention", FORBIDDEN) == sorted(expected)


def test_self_attention_may_call_the_students_own_sdpa():
    cells = ["def scaled_dot_product_attention(q, k, v, mask=None):\n    return q, k",
             "def self_attention(x, W_q, W_k, W_v, causal=True):\n    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)"]
    assert forbidden_uses(cells, "self_attention", FORBIDDEN) == []


@pytest.mark.parametrize("source, skipped", [('grader.check("q4")', True), ("grader.export(pdf=False)", True),
                                             ('grader.check("q4")\nq4_ratio = 16', False), ("x = 1", False)])
def test_bare_grader_calls_are_skipped(source, skipped):
    assert is_otter_call(source) is skipped


def test_replies_are_plain_bounded_files(tmp_path):
    import os

    from attn_ref.grade.scoring import read_reply

    (tmp_path / "ok.json").write_text("{}")
    assert read_reply(tmp_path / "ok.json") == b"{}"
    os.symlink("/dev/zero", tmp_path / "zero.json")
    os.symlink(tmp_path / "ok.json", tmp_path / "link.json")
    (tmp_path / "big.npy").write_bytes(b"0" * 2048)
    for name, limit in (("zero.json", 1024), ("link.json", 1024), ("big.npy", 1024)):
        with pytest.raises((OSError, ValueError)):
            read_reply(tmp_path / name, limit=limit)
