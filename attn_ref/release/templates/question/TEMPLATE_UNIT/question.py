"""TEMPLATE_UNIT: a numeric question. `attn-ref new` wrote an example: replace it, with prompt.md (what students
read) and solution.py (assigns every answer). Compute each key here from the prompt's numbers, never type it
in. Every field of Question and Answer: docs/instructors.md, "The authoring reference"."""

from attn_ref.release.units import Answer, Question

SAMPLE = [2, 4, 4, 4, 5, 5, 7, 9]  # the numbers prompt.md gives

QUESTION = Question(
    name="TEMPLATE_UNIT",
    title="The mean of a sample",
    answers=(
        # a variable the student assigns, its kind, the key; low/high: a plausible range the public check holds
        Answer("TEMPLATE_UNIT_mean", "float", sum(SAMPLE) / len(SAMPLE), low=0),
        Answer("TEMPLATE_UNIT_count", "int", len(SAMPLE), low=1),
    ),
)
