"""The course's assignments, one line each: `attn-ref build --only NAME` builds one (every field:
docs/instructors.md, "The authoring reference")."""

from attn_ref.release.course import Entry

ASSIGNMENTS = (
)
