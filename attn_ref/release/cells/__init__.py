"""Code the builder writes for students, kept as real .py files (linted, read by students): the export
module shipped beside a notebook that has written parts (export_written.py)."""
