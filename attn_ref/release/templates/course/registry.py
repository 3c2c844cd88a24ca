"""The course's assignments, one line each: `attn-ref build --only NAME` builds one (docs/authoring.md)."""

from attn_ref.release.course import Entry

ASSIGNMENTS = (
)
