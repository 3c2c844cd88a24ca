"""Lab 3.1: attention in code, c1-c8; students see their hidden results at once."""

from attn_ref.release.course import BuildCheck, Layout

ASSIGNMENT = Layout(
    units=("c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"),
    visibility="visible",
    named_mutants=1.0,  # every mutant of the lab is named, in its own words, on a line it fails
    setup="setup.py",
    exploration_intro="exploration/intro.md",
    exploration=("exploration/1_heatmap.py", "exploration/2_cost.py", "exploration/3_gradient.py"),
    timing=("exploration/2_cost.py",),
    build_checks=(
        BuildCheck(r"fitted slope of time against T for T >= 512: ([0-9.]+)", 1.6,
                   "the solution's cost plot has a fitted slope of {value} for T >= 512, below {minimum}: the machine "
                   "was busy or the timing is off; rebuild to get a plot that shows T²"),
    ),
)
