"""Code cells the builder writes into student notebooks, kept as real .py files (linted, read by students)."""
