"""The export of this notebook: `export(grader)`, in its last cell, makes the zip to upload to Gradescope
with written_answers.pdf in it: your written answers, one question per page, for a PDF assignment if your
course has one. The PDF is made with matplotlib (no LaTeX); if it cannot be made, the cell says so and
the zip is still made.

attn-ref build wrote this file beside the notebook: keep the two in one folder. Nothing here is graded.
"""

# attn_ref/portable/written.py (written_answers, answers_pdf) is written in here when the notebook is built

QUESTIONS = []  # (question, prompt) of every written part, written in when the notebook is built
TITLE = ""
PDF = "written_answers.pdf"


def export(grader, **arguments):
    """``grader.export(**arguments)``, with written_answers.pdf made first and added to the zip."""
    files = list(arguments.pop("files", None) or [])
    try:
        # otter's own way to the notebook's path: the name the first cell gave otter.Notebook
        pdf = answers_pdf(grader._resolve_nb_path(None), QUESTIONS, PDF, TITLE)  # noqa: F821 - from attn_ref/portable/written.py
    except Exception as error:  # never silent, never in the way of the zip
        print(f"{PDF} could NOT be made ({type(error).__name__}: {error}). The zip is still made; tell your TA.")
    else:
        files.append(pdf)
        print(f"{PDF}: made, and added to the zip")
    return grader.export(files=files, **arguments)
