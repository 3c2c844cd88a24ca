"""Practice 3.1: the eleven practice questions of lecture note 3.1, graded after the due date."""

from attn_ref.release.course import Layout

ASSIGNMENT = Layout(
    units=("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11"),
    visibility="after_due_date",
    variant_key="dl-course 3.1, fall 2026",  # q2 and q5 give each student their own numbers: change it every term
)
