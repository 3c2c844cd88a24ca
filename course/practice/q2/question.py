"""q2: a long PDF (note 3.1, §11.2, with §4). Each student gets their own T; the note's 4096 is the default."""

from attn_ref.costs import attention_map_bytes, attention_scores
from attn_ref.release.units import Answer, Parameter, Question

PARAMETERS = (Parameter("T", (2048, 3072, 4096, 6144, 8192), default=4096),)  # §4: "a 4k-token PDF"


def answers(T):
    return (
        Answer("q2_scores", "int", attention_scores(T), low=1),
        Answer("q2_bytes", "int", attention_map_bytes(T), low=1),
        Answer("q2_megabytes", "float", attention_map_bytes(T) / 1e6, low=0, high=1e6),  # decimal MB, the note's "67 MB"
    )


QUESTION = Question(
    name="q2",
    source="Note 3.1, §11.2 (and §4)",
    title="A long PDF",
    answers=answers(T=4096),
    parameters=PARAMETERS,
    vary=answers,
)
