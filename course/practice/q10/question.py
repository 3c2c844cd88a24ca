"""q10: the cat … it, with T = 4 (note 3.1, §4 and §8)."""

from attn_ref.costs import attention_path_length, attention_scores, rnn_path_length
from attn_ref.release.units import Answer, Question

SENTENCE = ("cat", "sat", "on", "it")

QUESTION = Question(
    name="q10",
    source="Note 3.1, §4 and §8",
    title="The cat … it, with T = 4",
    answers=(
        Answer("q10_rnn_steps", "int", rnn_path_length(len(SENTENCE)), low=1),
        Answer("q10_attention_path", "int", attention_path_length(len(SENTENCE)), low=1),
        Answer("q10_scores", "int", attention_scores(len(SENTENCE)), low=1),
    ),
)
