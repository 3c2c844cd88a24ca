"""report.html and a written-answers page as a TA sees them: rendered by headless Chromium in a 1280×900
window, screenshots kept under the test's tmp dir, and the layout checked from positions the page itself
measures: the summary within the first screen, no code or answer wider than its column, no sideways scroll;
also for a class of 1,000 students, whose report stays within its size bound.

Chromium is Debian's `chromium` package (.ci/run installs it where apt can); where it is missing these
tests are skipped, saying so."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_class import LONG_ANSWER, make_class, make_large_class

from attn_ref.grade.classroom.report import LIST_ROWS, write_report
from attn_ref.grade.classroom.written_pages import write_written_pages

WIDTH, HEIGHT = 1280, 900
CHROMIUM = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium on this machine (apt-get install chromium): "
                                                         "the report's layout is not checked in a browser")

# Run by the browser on a copy of the page: where the summary ends on first load, then, every <details>
# opened, each code block's and answer's width against its own box and its column's, and the page's.
MEASURE = """<script>
const box = e => e.getBoundingClientRect();
const summary = document.getElementById("summary");
const layout = {viewport: innerWidth, summary: summary ? {top: box(summary).top, bottom: box(summary).bottom} : null};
document.querySelectorAll("details").forEach(d => { d.open = true; });
layout.blocks = [...document.querySelectorAll("pre, .text")].map(e => ({
  scroll: e.scrollWidth, client: e.clientWidth, right: box(e).right, column: box(e.parentElement).right,
  text: e.textContent.slice(0, 60)}));
layout.page = document.documentElement.scrollWidth;
const out = document.createElement("output"); out.id = "layout"; out.textContent = JSON.stringify(layout);
document.body.appendChild(out);
</script>"""


def _chromium(page: Path, *args: str) -> str:
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={page.parent / 'chromium-profile'}", f"--window-size={WIDTH},{HEIGHT}",
                           "--run-all-compositor-stages-before-draw", "--virtual-time-budget=3000", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _seen(page: Path, shots: Path) -> dict:
    """Screenshot of the page as opened (the TA's first screen), and its measured layout."""
    shot = shots / f"{page.stem}.png"
    _chromium(page, f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(shot.read_bytes()[16:20], "big") == WIDTH
    measured = page.with_name(page.stem + ".measured.html")
    measured.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    found = re.search(r'<output id="layout">(.*?)</output>', _chromium(measured, "--dump-dom"), re.S)
    assert found, "the page's measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def _fits(layout: dict) -> None:
    assert layout["summary"] and layout["summary"]["bottom"] <= HEIGHT, f"summary not within the first {HEIGHT} px: {layout['summary']}"
    assert layout["blocks"]
    for block in layout["blocks"]:
        assert block["scroll"] <= block["client"] + 1 and block["right"] <= block["column"] + 1, f"overflows its column: {block}"
    assert layout["page"] <= layout["viewport"], "the page scrolls sideways"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    book = make_class(folder / "class")
    write_report(folder / "report.html", book)
    write_written_pages(folder / "written", book)
    shots = folder / "screenshots"
    shots.mkdir()
    return folder, shots


def test_the_report_summary_is_on_the_first_screen_and_code_stays_in_its_column(pages):
    folder, shots = pages
    page = (folder / "report.html").read_text()
    assert "Scores that differ from Gradescope" in page.split('id="pairs"')[0]  # inside what is measured above the fold
    layout = _seen(folder / "report.html", shots)
    assert sum("table = [1000,1001" in b["text"] or "def softmax" in b["text"] for b in layout["blocks"]) >= 4  # code was laid out
    _fits(layout)


def test_a_written_answers_page_keeps_long_answers_in_their_column(pages):
    folder, shots = pages
    assert LONG_ANSWER in (folder / "written" / "q1.html").read_text()
    layout = _seen(folder / "written" / "q1.html", shots)
    assert any(b["text"].startswith("Parallel matmuls; see https://") for b in layout["blocks"])
    _fits(layout)


LARGE_REPORT_BYTES = 3 << 20  # report.html's bound: 50 pairs and 200 KB of code per question, 200 rows per list


def test_a_thousand_student_report_is_bounded_and_its_summary_on_the_first_screen(tmp_path):
    book = make_large_class(tmp_path / "class")
    write_report(tmp_path / "report.html", book)
    page = (tmp_path / "report.html").read_text()
    assert len(page.encode()) <= LARGE_REPORT_BYTES
    assert "1000 submissions, 1000 students" in page.split('id="pairs"')[0]  # the summary, before the pairs
    assert "more pairs" in page  # more pairs than the page shows: counted
    assert page.count("patches numpy: np.allclose") == LIST_ROWS and f"… and {250 - LIST_ROWS} more submissions" in page
    shots = tmp_path / "screenshots"
    shots.mkdir()
    layout = _seen(tmp_path / "report.html", shots)
    assert sum("def softmax" in b["text"] for b in layout["blocks"]) >= 20  # pairs' code was laid out
    _fits(layout)
