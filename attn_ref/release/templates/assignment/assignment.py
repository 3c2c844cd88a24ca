"""TEMPLATE_ASSIGNMENT: its units in the notebook's order (`attn-ref new TEMPLATE_ASSIGNMENT --task NAME` or
`--question NAME` adds one). Every field of Layout: docs/instructors.md, "The authoring reference"."""

from attn_ref.release.course import Layout

ASSIGNMENT = Layout(
    units=(),
    # when Gradescope shows the hidden results: "hidden", "after_due_date", "after_published" or "visible"
    visibility="after_due_date",
    # setup="setup.py",  # a code cell after intro.md: the imports and seeds every unit's cells use
)
