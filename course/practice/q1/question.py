"""q1: batching a sentence (note 3.1, §11.1, with §2 and §4)."""

from attn_ref.costs import attention_sequential_steps, rnn_sequential_steps
from attn_ref.release.units import Answer, Question

SENTENCE = ("cat", "sat", "on", "it")  # the note's 4-token sentence
CHOICES = (
    ("A", "Attention has fewer parameters than an LSTM, so it fits on a GPU."),
    ("B", "Given all embeddings X, queries, keys and values for every position are matrix multiplies with no "
          "step waiting on another; an LSTM's step t needs the hidden state from step t − 1."),
    ("C", "LSTMs cannot run on GPUs."),
    ("D", "Attention only looks at the previous token, so each position is independent."),
)

QUESTION = Question(
    name="q1",
    source="Note 3.1, §11.1 (and §2, §4)",
    title="Batching a sentence",
    answers=(
        Answer("q1_lstm_sequential_steps", "int", rnn_sequential_steps(len(SENTENCE)), low=1),
        Answer("q1_attention_sequential_steps", "int", attention_sequential_steps(len(SENTENCE)), low=1),
        Answer("q1_choice", "choice", "B", choices=CHOICES),
    ),
)
