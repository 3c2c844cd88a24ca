"""q4: counting scores (note 3.1, §11.4)."""

from attn_ref.costs import attention_scores
from attn_ref.release.units import Answer, Question

QUESTION = Question(
    name="q4",
    source="Note 3.1, §11.4",
    title="Counting scores",
    answers=(
        Answer("q4_scores_T8", "int", attention_scores(8), low=1),
        Answer("q4_scores_T32", "int", attention_scores(32), low=1),
        Answer("q4_ratio", "int", attention_scores(32) // attention_scores(8), low=1),
    ),
)
