"""The written ("explain") answers of a class, one HTML page per question, for grading by hand.

Answers are read from each submitted notebook's Markdown between otter's question markers. Student text
is escaped, never rendered as HTML.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from . import submission as submission_files
from .results import write_atomically

BEGIN, END = "<!-- BEGIN QUESTION -->", "<!-- END QUESTION -->"
PLACEHOLDER = "_Type your answer here, replacing this text._"
HEADING = re.compile(r"\*\*([A-Za-z_][A-Za-z0-9_]*), explain\*\*")  # the written part of any question


def written_answers(nb) -> dict[str, str]:
    """{question: answer text} for the notebook's written parts ("" where left blank)."""
    answers, current, parts = {}, None, []
    for cell in nb.cells:
        source = cell.get("source", "")
        if cell.get("cell_type") != "markdown":
            continue
        if BEGIN in source:
            match = HEADING.search(source)
            current, parts = (match.group(1) if match else None), []
            continue  # the prompt itself
        if current is not None:
            text = source.split(END)[0]
            if text.strip() and text.strip() != PLACEHOLDER:
                parts.append(text.strip())
            if END in source:
                answers[current] = "\n\n".join(parts)
                current = None
    if current is not None:  # a deleted end marker: keep what was found
        answers[current] = "\n\n".join(parts)
    return answers


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
.answer{{border-top:1px solid #ccc;padding:.6rem 0}} .who{{font-weight:600}} .sid{{color:#666}}
.text{{white-space:pre-wrap;background:#f7f7f7;padding:.5rem;border-radius:4px}} .blank{{color:#a00}}</style>
</head><body><h1>{title}</h1><p>{prompt}</p><p>{count} submissions.</p>
{answers}
</body></html>
"""


def write_written_pages(folder: Path, subs, checks: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    per_submission = {}
    for sub in subs:
        try:
            nb, _ = submission_files.load(sub.path)
            per_submission[sub.key] = written_answers(nb)
        except Exception as err:  # an unreadable notebook: its row says why
            per_submission[sub.key] = {"__error__": f"unreadable submission: {err}"}
    for item in checks["written"]:
        blocks = []
        for sub in subs:
            names = ", ".join(s["name"] for s in sub.students) or sub.key
            sids = ", ".join(s["sid"] for s in sub.students if s["sid"])
            answers = per_submission[sub.key]
            text = answers.get("__error__") or answers.get(item["question"], "")
            body = f'<div class="text">{html.escape(text)}</div>' if text else '<div class="blank">(no answer)</div>'
            blocks.append(f'<div class="answer"><div class="who">{html.escape(names)} '
                          f'<span class="sid">{html.escape(sids)} · {html.escape(sub.path.name)}</span></div>{body}</div>')
        title = f"{item['question']}: {item['title']} (written part)"
        page = PAGE.format(title=html.escape(title), prompt=html.escape(item["prompt"]), count=len(subs), answers="\n".join(blocks))
        write_atomically(folder / f"{item['question']}.html", page.encode())
