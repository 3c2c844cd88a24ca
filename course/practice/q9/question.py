"""q9: T and T² side by side (note 3.1, §3)."""

from attn_ref.costs import attention_scores
from attn_ref.release.units import Answer, Question

QUESTION = Question(
    name="q9",
    source="Note 3.1, §3",
    title="T and T² side by side",
    answers=(Answer("q9_scores", "int_dict", {T: attention_scores(T) for T in (32, 512, 4096)}),),
)
