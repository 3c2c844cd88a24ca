"""q3: what the hidden state had to carry (note 3.1, §11.3, with §1)."""

from attn_ref.release.units import Answer, Question

CHOICES = (
    ("A", "Only the most recent token."),
    ("B", "The gradient of the loss."),
    ("C", "Everything from the earlier tokens that later steps might need, squeezed into one fixed-size vector."),
    ("D", "The attention weights of the previous layer."),
)

QUESTION = Question(
    name="q3",
    source="Note 3.1, §11.3 (and §1)",
    title="What the hidden state had to carry",
    answers=(Answer("q3_choice", "choice", "C", choices=CHOICES),),
)
