"""The `practice` release: q1–q11 of the contract, one unit each.

Values come from attn_ref.answers; solutions show the arithmetic a student would write, and a test
checks that running them reproduces the answer key.
"""

from __future__ import annotations

from .units import Answer, Question

TITLE = "Practice 3.1: from recurrence to attention"

INTRO = """# Practice 3.1: from recurrence to attention

These eleven questions go with lecture note 3.1. Each auto-graded answer is a variable you assign in the
cell under its question; each "explain" part is a short written answer, graded by hand.

* Run `grader.check("q4")` for instant feedback. Public checks look at **types and ranges only**; hidden
  checks grade the values after you submit, so a passing public check does not mean a correct answer.
* Numbers: whole numbers exactly (an `int`, or `16.0`, a NumPy or torch scalar, a `Fraction` that is
  whole), other numbers to three significant figures or better (any number type), `True`/`False` for
  yes/no questions (not 0 or 1), and exactly one letter as a string (`"A"`, `"b"`) for multiple choice.
* Compute with Python expressions (`4096 ** 2`) rather than typing rounded results.
"""


def choice_prompt(choices) -> str:
    return "\n".join(f"* **{letter}**: {text}" for letter, text in choices)


Q1_CHOICES = (
    ("A", "Attention has fewer parameters than an LSTM, so it fits on a GPU."),
    ("B", "Given all embeddings X, queries, keys and values for every position are matrix multiplies with no "
          "step waiting on another; an LSTM's step t needs the hidden state from step t − 1."),
    ("C", "LSTMs cannot run on GPUs."),
    ("D", "Attention only looks at the previous token, so each position is independent."),
)
Q3_CHOICES = (
    ("A", "Only the most recent token."),
    ("B", "The gradient of the loss."),
    ("C", "Everything from the earlier tokens that later steps might need, squeezed into one fixed-size vector."),
    ("D", "The attention weights of the previous layer."),
)
Q6_CHOICES = (
    ("A", "From the decoder's state: the target side asks, the encoder states answer."),
    ("B", "From the same sequence: every token is query, key and value at once."),
    ("C", "From a fixed learned vector shared by every position."),
)

QUESTIONS: tuple[Question, ...] = (
    Question(
        name="q1",
        source="§11.1 (and §2, §4)",
        title="Batching a sentence",
        prompt="""Why can a transformer compute a whole sentence's updates in one batch on a GPU, while an LSTM
cannot? Take the note's 4-token sentence *cat, sat, on, it*.

* `q1_lstm_sequential_steps`: how many cell calls must an LSTM make **one after another** to read it?
* `q1_attention_sequential_steps`: how many dependent steps does one attention layer need for it?
* `q1_choice`: which statement explains the difference?

""" + choice_prompt(Q1_CHOICES),
        answers=(
            Answer("q1_lstm_sequential_steps", "int", low=1),
            Answer("q1_attention_sequential_steps", "int", low=1),
            Answer("q1_choice", "choice", choices=Q1_CHOICES, correct="B"),
        ),
        solution="tokens = ['cat', 'sat', 'on', 'it']\n"
        "q1_lstm_sequential_steps = len(tokens)  # step t waits for step t - 1\n"
        "q1_attention_sequential_steps = 1  # all queries meet all keys in one matmul\n"
        "q1_choice = 'B'",
        written_prompt="In one sentence, in your own words: why does that difference matter for pretraining?",
        written_solution="Because every position's Q, K and V come from matrix multiplies over the whole "
        "sequence at once, a GPU processes all tokens in parallel, while an LSTM must finish step t − 1 "
        "before step t, so its time grows with the sequence no matter how many cores there are.",
    ),
    Question(
        name="q2",
        source="§11.2 (and §4)",
        title="A 4k-token PDF",
        prompt="""A policy PDF is tokenised to $T = 4096$ tokens and fed to one attention head of one layer.

* `q2_scores`: how many attention scores are in that head's $T \\times T$ map?
* `q2_bytes`: how many bytes does the map take in fp32 (4 bytes per score)?
* `q2_megabytes`: the same in decimal megabytes (1 MB = 10⁶ bytes).""",
        answers=(
            Answer("q2_scores", "int", low=1),
            Answer("q2_bytes", "int", low=1),
            Answer("q2_megabytes", "float", low=0, high=1e6),
        ),
        solution="T = 4096\nq2_scores = T ** 2\nq2_bytes = q2_scores * 4\nq2_megabytes = q2_bytes / 1e6",
        written_prompt="What is the quadratic cost complaining about? Name the resource and how it grows with T.",
        written_solution="Memory (and time) for the full attention map: every one of the T² query-key pairs "
        "gets a score, so doubling T quadruples the map, about 67 MB per head per layer at T = 4096 before "
        "batching and stacking layers.",
    ),
    Question(
        name="q3",
        source="§11.3 (and §1)",
        title="What the hidden state had to carry",
        prompt="""In a seq2seq RNN, what did the hidden state $h_t$ have to store that an attention row can
fetch directly instead? `q3_choice`:

""" + choice_prompt(Q3_CHOICES),
        answers=(Answer("q3_choice", "choice", choices=Q3_CHOICES, correct="C"),),
        solution="q3_choice = 'C'",
        written_prompt="Say it in one sentence of your own.",
        written_solution="h_t had to hold everything about the earlier tokens that any later step might need, "
        "in one fixed-size vector; an attention row instead looks back at every earlier state and takes what "
        "it needs by weight.",
    ),
    Question(
        name="q4",
        source="§11.4",
        title="Counting scores",
        prompt="""One head's attention map is $T \\times T$.

* `q4_scores_T8`: scores for $T = 8$.
* `q4_scores_T32`: scores for $T = 32$.
* `q4_ratio`: the ratio $32^2 / 8^2$ (a whole number).""",
        answers=(Answer("q4_scores_T8", "int", low=1), Answer("q4_scores_T32", "int", low=1), Answer("q4_ratio", "int", low=1)),
        solution="q4_scores_T8 = 8 ** 2\nq4_scores_T32 = 32 ** 2\nq4_ratio = q4_scores_T32 // q4_scores_T8",
    ),
    Question(
        name="q5",
        source="§11.5 (and §2)",
        title="Path length and the Jacobian product",
        prompt="""An RNN reads $T = 50$ tokens. Path length counts the steps between two positions.

* `q5_rnn_path`: steps from token 1 to token 50 through the recurrence.
* `q5_attention_path`: steps between the same two tokens through attention.
* `q5_rnn_product`: if every RNN Jacobian factor is $0.9$, the product along that path, $0.9^{49}$
  (compare it with attention's single hop of 1).""",
        answers=(Answer("q5_rnn_path", "int", low=1), Answer("q5_attention_path", "int", low=1), Answer("q5_rnn_product", "float", low=0, high=1)),
        solution="T = 50\nq5_rnn_path = T - 1\nq5_attention_path = 1\nq5_rnn_product = 0.9 ** q5_rnn_path",
    ),
    Question(
        name="q6",
        source="§11.6 (and §1)",
        title="Where the queries come from",
        prompt="""Bahdanau et al. (2015) versus Vaswani et al. (2017).

* `q6_bahdanau_queries`: where do Bahdanau's queries come from?
* `q6_vaswani_queries`: where do the queries of Vaswani's self-attention come from?

""" + choice_prompt(Q6_CHOICES),
        answers=(
            Answer("q6_bahdanau_queries", "choice", choices=Q6_CHOICES, correct="A"),
            Answer("q6_vaswani_queries", "choice", choices=Q6_CHOICES, correct="B"),
        ),
        solution="q6_bahdanau_queries = 'A'\nq6_vaswani_queries = 'B'",
        written_prompt="One sentence each: Bahdanau's queries, then Vaswani's.",
        written_solution="Bahdanau: the query is the decoder's RNN state, scored against the encoder states "
        "(attention on top of an RNN). Vaswani: queries, keys and values are all projections of the same "
        "sequence's tokens (attention instead of an RNN).",
    ),
    Question(
        name="q7",
        source="§11.7 (and §3, §6)",
        title="KV caching and training cost",
        prompt="""Caching keys and values at decode time makes each new token cheaper. Does it change the
training cost of a full attention map? `q7_changes_training_cost` (True or False).""",
        answers=(Answer("q7_changes_training_cost", "bool"),),
        solution="q7_changes_training_cost = False",
        written_prompt="Why or why not?",
        written_solution="No: the cache saves recomputing past keys and values while generating one token at "
        "a time (inference, O(T) per new token). Training still scores every pair of the T × T map for all "
        "positions at once.",
    ),
    Question(
        name="q8",
        source="§2 and §8",
        title="The product over 39 steps",
        prompt="""The note says: if each RNN Jacobian factor is $0.9$, the product over 39 steps is small.
Compute it yourself: `q8_product_39` $= 0.9^{39}$.

> **Check the note's arithmetic.** The note prints ≈ 0.017 here. That is a slip, not a rounding of
> $0.9^{39}$: recompute the value yourself and keep three significant figures or more.""",
        answers=(Answer("q8_product_39", "float", low=0, high=1),),
        solution="q8_product_39 = 0.9 ** 39",
    ),
    Question(
        name="q9",
        source="§3",
        title="T and T² side by side",
        prompt="""Write $T^2$ for $T = 32, 512, 4096$ as a dict mapping each $T$ (an int) to its number of
scores: `q9_scores = {32: ..., 512: ..., 4096: ...}`.""",
        answers=(Answer("q9_scores", "int_dict"),),
        solution="q9_scores = {T: T ** 2 for T in (32, 512, 4096)}",
    ),
    Question(
        name="q10",
        source="§4 and §8",
        title="The cat … it, with T = 4",
        prompt="""The sentence *cat, sat, on, it* has $T = 4$ tokens.

* `q10_rnn_steps`: recurrence steps from *cat* to *it*.
* `q10_attention_path`: attention hops from *it* to *cat*.
* `q10_scores`: scores in the full $4 \\times 4$ attention map.""",
        answers=(Answer("q10_rnn_steps", "int", low=1), Answer("q10_attention_path", "int", low=1), Answer("q10_scores", "int", low=1)),
        solution="tokens = ['cat', 'sat', 'on', 'it']\nq10_rnn_steps = tokens.index('it') - tokens.index('cat')\n"
        "q10_attention_path = 1\nq10_scores = len(tokens) ** 2",
    ),
    Question(
        name="q11",
        source="§4, \"before batching and stacking layers\"",
        title="Batching and stacking",
        prompt="""The note's 67 MB is one map. Now batch 8 sequences of $T = 4096$ through a model with 12 layers
of 12 heads, and store every map.

* `q11_bytes`: total bytes in fp32 (4 bytes per score).
* `q11_bytes_bf16`: total bytes in bf16 (2 bytes per score).""",
        answers=(Answer("q11_bytes", "int", low=1), Answer("q11_bytes_bf16", "int", low=1)),
        solution="batch, heads, layers, T = 8, 12, 12, 4096\nq11_bytes = batch * heads * layers * T ** 2 * 4\n"
        "q11_bytes_bf16 = batch * heads * layers * T ** 2 * 2",
        written_prompt="What does FlashAttention change about this bill, and what does it not change?",
        written_solution="It changes the implementation: scores are computed tile by tile with an online "
        "softmax, so the full T × T map is never stored and memory grows with T, not T². It does not change "
        "that every pair of tokens interacts: the flops are still O(T² d).",
    ),
)
