"""report.html, the integrity report beside the gradebook: for a TA to read, never a score change.

* Code similarity per unit between submissions, measured with copydetect (MOSS-style winnowing; made for
  this), the starter code excluded: pairs above the threshold, with their code side by side and the
  shared parts marked.
* Each student's integrity flags (code that reaches for the grader's files, patches numpy or otter,
  forbidden calls).
* For a Gradescope export: each submission whose local score differs from Gradescope's, with the
  questions that differ where the export has them.
"""

from __future__ import annotations

import html
import io
import re
from itertools import combinations
from pathlib import Path

import numpy as np

from . import submission as submission_files
from .results import write_atomically

THRESHOLD = 0.75  # the share of a submission's tokens found in another's
NOISE = 25  # copydetect's k: matches shorter than this many characters are noise
GUARANTEE = 30  # matches this long are always found
MIN_CODE = 80  # characters of code (starter excluded) below which a unit is not compared
MAX_CODE = 20_000  # characters of a unit's code compared: far above any honest answer, and bounds the work


def unit_code(nb, unit: dict) -> str:
    r"""The code a submission wrote for one unit: the cell(s) defining its function or assigning its answers.

    Patterns match within a line only (``[ \t]``, never ``\s``): ``^\s*`` across a cell of blank lines is
    quadratic, and a submission chooses its cells."""
    if "function" in unit:
        pattern = re.compile(rf"^[ \t]*def[ \t]+{re.escape(unit['function'])}[ \t]*\(", re.M)
    else:
        names = "|".join(re.escape(a["name"]) for a in unit["answers"])
        pattern = re.compile(rf"^[ \t]*({names})[ \t]*=", re.M)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "code" and pattern.search(c.source))[:MAX_CODE]


def _fingerprint(code: str, boilerplate):
    from copydetect import CodeFingerprint

    return CodeFingerprint("unit.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate, fp=io.StringIO(code),
                           language="python")


def _marked(code: str, slices) -> str:
    """The code with the shared slices marked, escaped."""
    out, last = [], 0
    for start, end in sorted(zip(slices[0], slices[1])):
        start, end = max(int(start), last), int(end)
        out += [html.escape(code[last:start]), "<mark>", html.escape(code[start:end]), "</mark>"]
        last = max(last, end)
    out.append(html.escape(code[last:]))
    return "".join(out)


def similar_pairs(codes: dict[str, str], starter: str, threshold: float = THRESHOLD) -> list[tuple]:
    """(key a, key b, similarity, marked code a, marked code b), most similar first."""
    from copydetect import compare_files

    # copydetect keeps a fingerprint's hashes as a set; as boilerplate it needs an array
    boilerplate = np.array(sorted(_fingerprint(starter, []).hashes), dtype=np.int64) if starter.strip() else []
    prints = {k: _fingerprint(c, boilerplate) for k, c in codes.items() if len(c.strip()) - len(starter.strip()) >= MIN_CODE}
    pairs = []
    for a, b in combinations(sorted(prints), 2):
        _, (sim_a, sim_b), (slices_a, slices_b) = compare_files(prints[a], prints[b])
        similarity = float(max(sim_a, sim_b))
        if similarity >= threshold:
            pairs.append((a, b, similarity, _marked(prints[a].raw_code, slices_a), _marked(prints[b].raw_code, slices_b)))
    return sorted(pairs, key=lambda p: -p[2])


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top}}
.pair{{display:grid;grid-template-columns:1fr 1fr;gap:.5rem}} pre{{background:#f7f7f7;padding:.5rem;overflow:auto;font-size:85%}}
mark{{background:#ffd54f}}</style></head><body><h1>{title}</h1>
<p>For a TA to read: similarity and flags are patterns, not proof, and change no score.</p>
{body}</body></html>
"""


def _who(g) -> str:
    return ", ".join(s["name"] for s in g.sub.students) or g.sub.key


def _similarity(book) -> str:
    notebooks = {}
    for g in book.graded:
        try:
            notebooks[g.sub.key] = submission_files.load(g.sub.path)[0]
        except Exception:  # unreadable: nothing to compare
            continue
    who = {g.sub.key: _who(g) for g in book.graded}
    parts = [f"<h2>Code similarity (copydetect; pairs at {THRESHOLD:.0%} or more, starter code excluded)</h2>"]
    for unit in book.checks["units"]:
        codes = {key: unit_code(nb, unit) for key, nb in notebooks.items()}
        try:
            pairs = similar_pairs(codes, unit.get("starter", ""))
        except Exception as err:  # noqa: BLE001 - the report is for reading; the gradebook never waits on it
            parts.append(f"<h3>{html.escape(unit['name'])}: not measured ({html.escape(type(err).__name__)}: "
                         f"{html.escape(str(err)[:200])})</h3>")
            continue
        parts.append(f"<h3>{html.escape(unit['name'])}: {html.escape(unit['title'])} ({len(pairs)} pairs)</h3>")
        for a, b, similarity, code_a, code_b in pairs[:50]:
            parts.append(f"<p><b>{similarity:.0%}</b>: {html.escape(who[a])} ({html.escape(a)}) and "
                         f"{html.escape(who[b])} ({html.escape(b)})</p><div class='pair'><pre>{code_a}</pre><pre>{code_b}</pre></div>")
    return "\n".join(parts)


def _flags(book) -> str:
    rows = []
    for g in book.graded:
        extra = g.results.get("extra_data", {})
        flags = list(extra.get("integrity_flags", []))
        flags += [f"{unit}: called {', '.join(names)}" for unit, names in (extra.get("forbidden_calls") or {}).items()]
        if flags:
            rows.append(f"<tr><td>{html.escape(_who(g))}</td><td>{html.escape(g.sub.key)}</td><td>"
                        + "<br>".join(html.escape(str(f)) for f in flags[:30]) + "</td></tr>")
    table = "<table><tr><th>students</th><th>submission</th><th>flags</th></tr>" + "".join(rows) + "</table>" if rows else "<p>None.</p>"
    return "<h2>Integrity flags</h2>" + table


def _gradescope(book) -> str:
    rows = []
    for g in book.graded:
        theirs = g.sub.gradescope
        if not theirs or theirs.get("score") is None:
            continue
        ours = round(sum(g.scores.values()), 6)
        if abs(ours - theirs["score"]) < 1e-6:
            continue
        units = [f"{u}: here {g.scores.get(u, 0):g}, Gradescope {s:g}" for u, s in theirs.get("tests", {}).items()
                 if s is not None and u in g.scores and abs(g.scores[u] - s) > 1e-6]
        rows.append(f"<tr><td>{html.escape(_who(g))}</td><td>{ours:g}</td><td>{theirs['score']:g}</td><td>"
                    + html.escape("; ".join(units) or "(the export lists no per-question scores)") + "</td></tr>")
    if not any(g.sub.gradescope for g in book.graded):
        return ""
    table = ("<table><tr><th>students</th><th>here</th><th>Gradescope</th><th>questions that differ</th></tr>"
             + "".join(rows) + "</table>") if rows else "<p>Every local score equals Gradescope's.</p>"
    return "<h2>Scores that differ from Gradescope's</h2>" + table


def write_report(path: Path, book) -> None:
    title = f"{book.checks['assignment']}: integrity report ({len(book.graded)} submissions)"
    body = _similarity(book) + _flags(book) + _gradescope(book)
    write_atomically(path, PAGE.format(title=html.escape(title), body=body).encode())
