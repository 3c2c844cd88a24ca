"""Attack cells for tests/test_adversarial.py: real code a hostile student could submit, one file each.

A test reads a file's source into a notebook cell (``__TARGET__``-style placeholders are filled in).
"""
