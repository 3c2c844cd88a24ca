"""The course as the tests see it: its assignments, the practice answer key and the lab's mutants.

MUTANTS[task] is a list of (what is wrong, marker of the cell to replace, mutant source, a probe it must
fail), read from course/lab/<task>/mutants/*.py, where `attn-ref check` reads them too.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from attn_ref.release.course import Assignment, load_course

COURSE = Path(__file__).resolve().parents[1] / "course"


@cache
def assignment(name: str) -> Assignment:
    return load_course(COURSE, name)[0]


def answer_key(name: str = "practice") -> dict:
    return {a.name: a.expected for q in assignment(name).units for a in q.answers}


ANSWERS = answer_key()
MUTANTS = {t.name: [(m.label, f"def {t.function}(", m.source, m.must_fail) for m in t.mutants] for t in assignment("lab").units}
N_SETS = max(len(m) for m in MUTANTS.values())


def bug_set(k: int) -> dict[str, tuple]:
    """The k-th mutant of every task that has one: {task: (label, marker, source, failing probe)}."""
    return {task: mutants[k] for task, mutants in MUTANTS.items() if k < len(mutants)}


# One wrong variable in every practice question: (its line, the variable that is wrong, its points).
WRONG_PRACTICE = {
    "q1_lstm_sequential_steps =": ("q1_lstm_sequential_steps = 4\nq1_attention_sequential_steps = 1\nq1_choice = 'a'", "q1_choice", 1),
    "q2_scores =": ("q2_scores = 4096 ** 2\nq2_bytes = q2_scores * 4\nq2_megabytes = q2_bytes / 2 ** 20", "q2_megabytes", 1),
    "q3_choice =": ("q3_choice = 'A'", "q3_choice", 1),
    "q4_scores_T8 =": ("q4_scores_T8 = 64\nq4_scores_T32 = 1024.0\nq4_ratio = 4", "q4_ratio", 1),
    "q5_rnn_path =": ("q5_rnn_path = 49\nq5_attention_path = 1\nq5_rnn_product = 0.9 ** 50", "q5_rnn_product", 1),
    "q6_bahdanau_queries =": ("q6_bahdanau_queries = 'a'\nq6_vaswani_queries = 'A'", "q6_vaswani_queries", 1),
    "q7_changes_training_cost =": ("q7_changes_training_cost = 0", "q7_changes_training_cost", 1),
    "q8_product_39 =": ("q8_product_39 = 0.017  # the note's rounding", "q8_product_39", 1),
    "q9_scores =": ("q9_scores = {'32': 1024, '512': 262144, '4096': 4096 * 2}", "q9_scores", 1),
    "q10_rnn_steps =": ("q10_rnn_steps = 4\nq10_attention_path = 1\nq10_scores = 16", "q10_rnn_steps", 1),
    "q11_bytes =": ("q11_bytes = 8 * 12 * 12 * 4096 ** 2 * 4\nq11_bytes_bf16 = q11_bytes", "q11_bytes_bf16", 1),
}
