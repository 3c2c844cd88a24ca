"""q5: path length and the Jacobian product (note 3.1, §11.5, with §2). Each student gets their own T and
factor; the note's T = 50 and 0.9 are the default."""

from attn_ref.costs import attention_path_length, jacobian_product, rnn_path_length
from attn_ref.release.units import Answer, Parameter, Question

PARAMETERS = (Parameter("T", (30, 40, 50, 60), default=50), Parameter("factor", (0.8, 0.85, 0.9, 0.95), default=0.9))


def answers(T, factor):
    return (
        Answer("q5_rnn_path", "int", rnn_path_length(T), low=1),
        Answer("q5_attention_path", "int", attention_path_length(T), low=1),
        Answer("q5_rnn_product", "float", jacobian_product(factor, rnn_path_length(T)), low=0, high=1),
    )


QUESTION = Question(
    name="q5",
    source="Note 3.1, §11.5 (and §2)",
    title="Path length and the Jacobian product",
    answers=answers(T=50, factor=0.9),
    parameters=PARAMETERS,
    vary=answers,
)
