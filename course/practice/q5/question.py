"""q5: path length and the Jacobian product (note 3.1, §11.5, with §2)."""

from attn_ref.costs import attention_path_length, jacobian_product, rnn_path_length
from attn_ref.release.units import Answer, Question

T, FACTOR = 50, 0.9

QUESTION = Question(
    name="q5",
    source="Note 3.1, §11.5 (and §2)",
    title="Path length and the Jacobian product",
    answers=(
        Answer("q5_rnn_path", "int", rnn_path_length(T), low=1),
        Answer("q5_attention_path", "int", attention_path_length(T), low=1),
        Answer("q5_rnn_product", "float", jacobian_product(FACTOR, rnn_path_length(T)), low=0, high=1),
    ),
)
