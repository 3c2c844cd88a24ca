"""The course's assignments: one line each (see docs/instructors.md, "Writing an assignment")."""

from attn_ref.release.course import Entry

ASSIGNMENTS = (
    Entry(name="practice", title="Practice 3.1: from recurrence to attention", folder="practice"),
    Entry(name="lab", title="Lab 3.1: attention in code", folder="lab"),
)
