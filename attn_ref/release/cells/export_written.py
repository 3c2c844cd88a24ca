# Save the notebook first (File > Save). This cell makes the zip to upload to Gradescope and, beside it,
# written_answers.pdf: your written answers, one question per page, for a PDF assignment if your course
# has one. The PDF is made here with matplotlib (no LaTeX); if it cannot be made, the zip still is.
QUESTIONS = []  # (question, prompt) of every written part, written in when the notebook is built
TITLE = ""


def _written_answers_pdf():
    ...  # attn_ref/written.py, written in when the notebook is built
    return answers_pdf(grader._resolve_nb_path(None), QUESTIONS, "written_answers.pdf", TITLE)  # noqa: F821


try:
    _pdf = _written_answers_pdf()
    if _pdf not in grader._addl_files:  # noqa: F821 - otter's grader, from the first cell
        grader._addl_files.append(_pdf)  # noqa: F821
    print("written_answers.pdf: made, and added to the zip")
except Exception as _error:  # never silent, never in the way of the zip
    print(f"written_answers.pdf could NOT be made ({type(_error).__name__}: {_error}). The zip is still made; tell your TA.")
