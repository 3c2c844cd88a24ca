"""q8: the product over 39 steps (note 3.1, §2 and §8). The note prints ≈ 0.017, a slip."""

from attn_ref.costs import jacobian_product
from attn_ref.release.units import Answer, Question

QUESTION = Question(
    name="q8",
    source="Note 3.1, §2 and §8",
    title="The product over 39 steps",
    answers=(Answer("q8_product_39", "float", jacobian_product(0.9, 39), low=0, high=1,
                    mistakes=((0.017, "that is the note's printed 0.017, which is a slip: compute 0.9^39 yourself"),)),),
)
