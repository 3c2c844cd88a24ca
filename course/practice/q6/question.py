"""q6: where the queries come from (note 3.1, §11.6, with §1)."""

from attn_ref.release.units import Answer, Question

CHOICES = (
    ("A", "From the decoder's state: the target side asks, the encoder states answer."),
    ("B", "From the same sequence: every token is query, key and value at once."),
    ("C", "From a fixed learned vector shared by every position."),
)

QUESTION = Question(
    name="q6",
    source="Note 3.1, §11.6 (and §1)",
    title="Where the queries come from",
    answers=(
        Answer("q6_bahdanau_queries", "choice", "A", choices=CHOICES),
        Answer("q6_vaswani_queries", "choice", "B", choices=CHOICES),
    ),
)
