"""Written ("explain") answers, found where students put them, and a PDF of them made without LaTeX.

``written_answers`` reads a notebook (its JSON, as a dict) and returns, for each written question, the
text between the question's prompt and the next question: Markdown cells and the comments of code cells,
without otter's markers and the placeholder; text typed into the prompt cell itself is found too, and
flagged. ``answers_pdf`` writes one page (or more) per question with matplotlib's PDF backend: pure
Python, nothing to install beyond what the students already have.

Standard library only (plus matplotlib, imported inside ``answers_pdf``): the grader uses this module,
and the release builder writes its source into export_written.py, the module beside the student notebook
whose ``export(grader)`` the notebook's export cell calls.
"""

import difflib
import json
import re
import textwrap

BEGIN = "<!-- BEGIN QUESTION -->"
END = "<!-- END QUESTION -->"
PLACEHOLDER = "_Type your answer here, replacing this text._"
MAX_ANSWER = 20000  # characters kept of one answer


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _heading(question):
    return "**%s, explain**" % question


def _clean(text):
    text = text.replace(BEGIN, "").replace(END, "").replace(PLACEHOLDER, "")
    return text.strip()


def _comments(code):
    lines = []
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            lines.append(stripped.lstrip("#").strip())
    return "\n".join(lines).strip()


def _added_words(prompt, cell_text):
    """What the cell says beyond the prompt it started as (a student who typed into the prompt cell)."""
    before, after = prompt.split(), _clean(cell_text).split()
    added = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag in ("insert", "replace"):
            added.extend(after[j1:j2])
    return " ".join(added).strip()


def _starts_another_part(cell, question):
    text = _source(cell)
    return cell.get("cell_type") == "markdown" and (BEGIN in text or text.lstrip().startswith("## ")) and _heading(question) not in text


def written_answers(notebook, questions):
    """{question: {"text": answer, "in_prompt": bool}} for each (question, prompt) of ``questions``.

    ``notebook``: the notebook as a dict (json.load) or nbformat node. A question whose prompt cell is
    gone gets an empty answer.
    """
    cells = list(notebook.get("cells", []))
    found = {}
    for question, prompt in questions:
        start = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown" and _heading(question) in _source(c)), None)
        if start is None:
            found[question] = {"text": "", "in_prompt": False}
            continue
        parts = []
        typed = _added_words("%s (graded by hand). %s" % (_heading(question), prompt), _source(cells[start]))
        if typed:
            parts.append(typed)
        for cell in cells[start + 1:]:
            source = _source(cell)
            if cell.get("cell_type") == "markdown" and END in source:  # otter puts it atop the next question's cell
                before = _clean(source.split(END)[0])
                if before:
                    parts.append(before)
                break
            if _starts_another_part(cell, question):
                break
            text = _comments(source) if cell.get("cell_type") == "code" else _clean(source)
            if text:
                parts.append(text)
        found[question] = {"text": "\n\n".join(parts)[:MAX_ANSWER], "in_prompt": bool(typed)}
    return found


def answers_pdf(notebook_path, questions, pdf_path, title=""):
    """One page (or more) per written question: its prompt and the student's answer, as plain text."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    with open(notebook_path, encoding="utf-8") as f:
        notebook = json.load(f)
    answers = written_answers(notebook, [(q, p) for q, p in questions])
    lines_per_page, width = 52, 92
    with PdfPages(pdf_path) as pdf:
        for question, prompt in questions:
            answer = answers[question]
            lines = textwrap.wrap("%s: %s" % (question, prompt), width) + [""]
            for paragraph in (answer["text"] or "(no answer)").split("\n"):
                lines += textwrap.wrap(paragraph, width) or [""]
            for page in range(0, max(len(lines), 1), lines_per_page):
                figure = Figure(figsize=(8.27, 11.69))  # A4
                heading = "%s%s, written answer%s" % (title + " - " if title else "", question, " (continued)" if page else "")
                figure.text(0.08, 0.95, heading, fontsize=13, weight="bold", va="top")
                body = "\n".join(lines[page:page + lines_per_page])
                figure.text(0.08, 0.91, re.sub(r"\$", r"\\$", body), fontsize=10, va="top", family="DejaVu Sans")
                pdf.savefig(figure)
    return pdf_path
