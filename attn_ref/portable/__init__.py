"""Runs anywhere: written into the notebooks and public tests students get (release/inline.py) and sent into
the kernel with the harness, as well as used by the grader. Standard library only (written.py draws its PDF
with matplotlib, imported when it is drawn); nothing of attn_ref, not even each other."""
