"""Every number note 3.1 states, recomputed, and the practice answer key (computed in the question folders)
against the contract."""

import math

import pytest
from course_units import ANSWERS

import attn_ref

CONTRACT_RTOL = 5e-3  # shared spec: floats pass within a relative 5e-3


def test_note_products():
    assert attn_ref.jacobian_product(0.9, 39) == pytest.approx(0.016423203, rel=1e-7)
    assert attn_ref.jacobian_product(0.9, 49) == pytest.approx(0.0057264169, rel=1e-7)
    assert attn_ref.rnn_gradient_norm(40, 0.9) == pytest.approx(0.9**39, rel=1e-12)


def test_note_slip_on_0_9_pow_39_falls_outside_tolerance():
    """§2 and §8 print 0.9^39 ≈ 0.017; the contract's tolerance must reject it."""
    true = attn_ref.jacobian_product(0.9, 39)
    assert not math.isclose(0.017, true, rel_tol=CONTRACT_RTOL)
    assert math.isclose(0.0164, true, rel_tol=CONTRACT_RTOL)


def test_quadratic_counts():
    assert [attn_ref.attention_scores(T) for T in (32, 512, 4096)] == [1024, 262144, 16777216]
    assert attn_ref.attention_scores(4096) == pytest.approx(1.68e7, rel=5e-3)  # §4 "≈ 1.68 × 10^7"
    assert attn_ref.attention_map_bytes(4096) == 67_108_864  # §4 "about 67 MB"
    assert attn_ref.attention_scores(4) == 16  # §4 step 3
    assert attn_ref.rnn_path_length(4) == 3 and attn_ref.attention_path_length(4) == 1  # §8
    assert attn_ref.rnn_path_length(50) == 49  # §11.5


def test_answer_key_matches_contract():
    expected = {
        "q1_lstm_sequential_steps": 4,
        "q1_attention_sequential_steps": 1,
        "q2_scores": 16_777_216,
        "q2_bytes": 67_108_864,
        "q2_megabytes": 67.108864,
        "q4_scores_T8": 64,
        "q4_scores_T32": 1024,
        "q4_ratio": 16,
        "q5_rnn_path": 49,
        "q5_attention_path": 1,
        "q5_rnn_product": 0.0057264,
        "q7_changes_training_cost": False,
        "q8_product_39": 0.016423,
        "q9_scores": {32: 1024, 512: 262144, 4096: 16777216},
        "q10_rnn_steps": 3,
        "q10_attention_path": 1,
        "q10_scores": 16,
        "q11_bytes": 77_309_411_328,
        "q11_bytes_bf16": 77_309_411_328 // 2,
        "q1_choice": "B",  # the letters live with their questions
        "q3_choice": "C",
        "q6_bahdanau_queries": "A",
        "q6_vaswani_queries": "B",
    }
    assert set(ANSWERS) == set(expected)
    for name, value in expected.items():
        got = ANSWERS[name]
        if isinstance(value, float):
            assert got == pytest.approx(value, rel=1e-4), name
        else:
            assert got == value and type(got) is type(value), name


def test_cli_prints_answer_table(capsys):
    from attn_ref.cli import main

    assert main(["answers"]) == 0
    out = capsys.readouterr().out
    assert "q11_bytes" in out and "77,309,411,328" in out
