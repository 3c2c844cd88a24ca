"""report.html read as a TA reads it: the summary first (counts, the scores that differ from Gradescope,
the flags), then the most similar pairs across questions, then per question the pairs, folded; the
starter's lines neither matched nor marked. Built from a synthetic class (report_class.py): no grading."""

from __future__ import annotations

import json
import os
import re

from report_class import ATTENTION, SOFTMAX, SOFTMAX_BODIES, make_class

from attn_ref.grade.classroom.report import write_report
from attn_ref.grade.classroom.similarity import similar_pairs


def _report(tmp_path, **kwargs) -> str:
    book = make_class(tmp_path / "class", **kwargs)
    write_report(tmp_path / "report.html", book)
    return (tmp_path / "report.html").read_text()


def _section(page: str, name: str) -> str:
    return re.search(rf'<section id="{name}">(.*?)</section>', page, re.S).group(1)


def test_the_summary_comes_first_and_holds_what_a_ta_acts_on(tmp_path):
    page = _report(tmp_path)
    summary = _section(page, "summary")
    assert page.index('id="summary"') < page.index('id="pairs"') < page.index('id="questions"') < page.index("<details>")
    assert "8 submissions, 9 students</b> (1 group submissions); 8 graded ok" in summary
    assert "Scores that differ from Gradescope's: 2 of 8" in summary
    assert "<td>Grace Hopper</td><td>5</td><td>2</td><td>c2: here 3, Gradescope 0</td>" in summary
    assert "<td>Edsger Dijkstra</td><td>3</td><td>1</td><td>c1: here 2, Gradescope 0</td>" in summary
    assert "Integrity flags: 3 submissions</b> (Grace Hopper, Ken Thompson, &lt;b&gt;Mallory" in summary
    assert "Code similarity: 3 pairs at 75% or more</b> in 2 of 2 questions" in summary


def test_an_export_without_scores_says_so(tmp_path):
    page = _report(tmp_path, scores=False)
    assert "the export has no scores" in page and "the export has no scores" in _section(page, "summary")
    assert "equals Gradescope" not in page and "differ from Gradescope" not in page


def test_the_most_similar_pairs_across_questions(tmp_path):
    overview = _section(_report(tmp_path), "pairs")
    rows = re.findall(r"<tr>(.*?)</tr>", overview)[1:]
    assert len(rows) == 3
    assert "Ada Lovelace, Zoë Ångström" in rows[0] and "Grace Hopper" in rows[0]  # two questions before one
    assert '<a href="#q-c1">c1</a> 100%, <a href="#q-c2">c2</a> 100%' in rows[0] and rows[0].endswith("<td><b>100%</b></td>")
    assert "Alan Turing" in rows[1] and "Edsger Dijkstra" in rows[1] and "c2" not in rows[1]


def test_each_pair_is_folded_and_student_text_stays_text(tmp_path):
    page = _report(tmp_path)
    code = _section(page, "questions")
    assert code.count("<details>") == 4 and "<details open" not in code  # folded: the page stays short
    assert "<script" not in page and "<img" not in page and "<b>Mallory" not in page
    assert "&lt;b&gt;Mallory&lt;/b&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page  # her name
    assert "&lt;/pre&gt;&lt;script&gt;alert(" in code and "&#x27;)&lt;/script&gt;&quot;" in code  # her code
    assert "called &lt;img src=x onerror=alert(2)&gt;" in _section(page, "flags")


def test_the_starters_docstring_is_neither_matched_nor_marked():
    """Every submission keeps the signature and docstring: alone they made every pair alike, and marked."""
    honest = {name: SOFTMAX + body for name, body in SOFTMAX_BODIES.items() if name != "copied"}
    honest["copy"] = SOFTMAX + SOFTMAX_BODIES["copied"]
    honest["copy2"] = SOFTMAX + SOFTMAX_BODIES["copied"].replace("exps", "e_x")
    starter = SOFTMAX + "    ...\n"
    pairs = similar_pairs(honest, starter)
    assert [(a, b) for a, b, *_ in pairs] == [("copy", "copy2")]
    for _, _, _, code_a, code_b in pairs:
        for marked in (code_a, code_b):
            shared = " ".join(re.findall(r"<mark>(.*?)</mark>", marked, re.S))
            assert "Softmax of x" not in shared and "def softmax" not in shared and "without underflow" not in shared
            assert "np.max(x, axis=axis" in shared
            assert marked.startswith('<span class="starter">def softmax(x, axis=-1):')
    # one docstring line edited: the rest of the docstring is still the starter's, the body still compared
    # (cutting the starter's lines out before matching left an unterminated string that hid the body)
    edited = SOFTMAX.replace("Softmax of x along axis", "My own words: exponentiate, normalise along axis, then")
    alike = similar_pairs({"a": edited + SOFTMAX_BODIES["inplace"], "b": edited + SOFTMAX_BODIES["inplace"]}, starter)
    assert alike and alike[0][2] > 0.9 and "np.exp(z, out=z)" in " ".join(re.findall(r"<mark>(.*?)</mark>", alike[0][3], re.S))
    assert "<span class=\"starter\">    x: an array of any shape." in alike[0][3]


def test_a_starter_left_as_given_is_not_compared():
    starter = ATTENTION + "    ...\n"
    assert similar_pairs({"a": starter, "b": starter, "c": starter + "\n# nothing yet\n"}, starter) == []


def test_the_report_is_the_same_in_every_process():
    """copydetect hashes with Python's hash(), salted per process: the report hashes k-grams its own way, so the
    same class gives the same similarities and marks whatever PYTHONHASHSEED is."""
    import subprocess
    import sys

    program = ("import json, sys; sys.path.insert(0, 'tests'); import report_class as t\n"
               "from attn_ref.grade.classroom.similarity import similar_pairs\n"
               "codes = {n: t.SOFTMAX + b for n, b in t.SOFTMAX_BODIES.items()}\n"
               "codes['copy'] = t.SOFTMAX + t.SOFTMAX_BODIES['copied'].replace('exps', 'e_x')\n"
               "print(json.dumps(similar_pairs(codes, t.SOFTMAX + '    ...\\n', threshold=0.0)))")
    runs = {subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("0", "13", "4242")}
    assert len(runs) == 1 and json.loads(runs.pop())


def test_an_unreadable_notebook_is_its_own_row_of_the_report_never_the_page(tmp_path):
    """A notebook that cannot be read (a cell whose source is 5) is listed as not compared; the rest is measured."""
    book = make_class(tmp_path / "class")
    broken = book.graded[0].sub.path
    raw = json.loads(broken.read_text())
    next(c for c in raw["cells"] if c["cell_type"] == "code")["source"] = 5
    broken.write_text(json.dumps(raw))
    write_report(tmp_path / "report.html", book)
    page = (tmp_path / "report.html").read_text()
    assert "Not compared (1: their notebook could not be read" in page
    assert re.search(r"c1: .* \([1-9]\d* pairs\)", page), "the others were compared"


def test_a_report_that_cannot_be_written_removes_the_last_runs_and_is_not_listed(tmp_path, monkeypatch):
    from attn_ref.grade.classroom import gradebook, report
    from attn_ref.grade.owned import private_folder

    book = make_class(tmp_path / "class")
    out = private_folder(tmp_path / "graded")
    (out / "report.html").write_text("last week's")
    for g in book.graded:
        (private_folder(out / "results") / f"{g.sub.key}.json").write_text(json.dumps(
            {"score": 1, "tests": [{"name": "c1: x", "score": 1, "max_score": 2}],
             "extra_data": {"status": "ok", "outcome": "graded", "autograder_version": book.checks.version}}))

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(report, "write_report", broken)
    written = gradebook.write_gradebook(out, [g.sub for g in book.graded], book.checks)
    assert not (out / "report.html").exists() and "report.html" not in written.written
    assert any("report.html could not be written (ValueError: a bug)" in w for w in written.warnings)
    assert "grades.csv" in written.written
