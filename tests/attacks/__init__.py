"""Attack cells for the tests in tests/end_to_end/: real code a hostile student could submit, one file each.

A test reads a file's source into a notebook cell (``__TARGET__``-style placeholders are filled in).
"""
