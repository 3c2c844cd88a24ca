"""Hangs end within the budget with results; what a student can send is bounded (text, zips, disk, replies).

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

import json
import os
import time
import zipfile

import psutil
from conftest import json_strings
from hostile import BOTH, appended, assert_plain, attack, every_function_calls, notebook, visible_text

from attn_ref.grade import grade
from attn_ref.grade.isolation import cleanup
from attn_ref.grade.isolation.sandbox import resolve


@BOTH
def test_floods_fifos_and_huge_code_end_within_the_budget(release, local, namespaces):
    fifo = """
import os, sys
def _fifo_reply(*args):
    os.mkfifo(os.path.join(args[-1], "reply.json"))
def take_over():
    frame = sys._getframe(1)
    while frame is not None:
        if "call" in frame.f_globals and "_write_json" in frame.f_globals:
            frame.f_globals["_write_json"] = lambda out_dir, name, data: _fifo_reply(out_dir)
            return
        frame = frame.f_back
"""
    nb = every_function_calls(appended(notebook(release, "lab", "blank"), attack("flood"), fifo), "take_over()")
    start = time.monotonic()
    results = local(nb, "lab", namespaces, budget=60)
    assert time.monotonic() - start < 60 + 60
    assert results["score"] == 0
    huge = appended(notebook(release, "lab", "solution"), "if False:\n" + "    x = 1\n" * 600_000)  # 4.8 MB, never run
    start = time.monotonic()
    results = local(huge, "lab", namespaces, budget=60)
    assert time.monotonic() - start < 60 + 60
    # its 600,000 lines are as many values of the notebook's JSON, past that bound before the code's
    assert results["score"] == 0
    assert "MB of code" in results["output"] or "(each line of a cell or of an output is one)" in results["output"]


def test_the_supervisor_ends_a_grading_that_hangs_and_still_reports(tmp_path):
    from attn_ref.grade.isolation.watchdog import Job, Supervisor

    def hang(jail):
        time.sleep(3600)

    done = []
    start = time.monotonic()
    Supervisor(resolve(), margin=2).run([Job("stuck", hang, lambda reason, status, fault: {"score": 0, "reason": reason,
                                                                                     "extra_data": {"status": status}}, 3)],
                                        lambda job, results: done.append(results))
    assert time.monotonic() - start < 15
    assert done[0]["extra_data"]["status"] == "timeout" and "time budget" in done[0]["reason"]


def test_student_text_in_results_is_bounded(release, local):
    nb = every_function_calls(notebook(release, "lab", "blank"), 'raise ValueError("x" * 50_000_000)')
    nb = appended(nb, *['raise RuntimeError("y" * 10_000_000)'] * 30)
    results = local(nb, "lab")
    assert len(json.dumps(results)) < 200_000
    assert results["score"] == 0


def test_an_identity_full_of_hidden_characters_is_written_plain(release, local):
    """GRADESCOPE_ID with ESC, CR, BEL, BS, NUL, a C1 CSI, a bidi override and a lone surrogate: the results
    are written (valid UTF-8), and the "Your numbers" line and extra_data.variant show it plain."""
    from conftest import signed_in

    hostile = "\x1b[2J\rana\x07\x08\x00@uni.edu\x9b31m\u202e\ud800\n✓ FORGED (3/3)"
    results = local(signed_in(notebook(release, "practice", "solution"), hostile), "practice")
    variant = results["extra_data"]["variant"]
    assert variant["basis"] == "unverified" and variant["declared"] == "?[2J?ana???@uni.edu?31m???✓ FORGED (3/3)"
    numbers = results["tests"][0]["output"]
    assert "Graded with the numbers of ?[2J?ana" in numbers and "\n" not in numbers
    for key, text in json_strings(results):
        assert_plain(text, key, lines=key == "output")


def test_a_small_zip_holding_a_huge_notebook_is_refused_before_unpacking(release, tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("lab.ipynb", "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(1024):  # 1 GiB of spaces: about 1 MB compressed
                member.write(chunk)
    assert bomb.stat().st_size < 4 << 20
    before = psutil.Process().memory_info().rss
    results = grade(bomb, release[0] / "autograder" / "lab-autograder.zip", out_dir=tmp_path)
    assert results["score"] == 0 and "at most" in results["output"]
    assert psutil.Process().memory_info().rss - before < 200 << 20


def test_many_small_files_cannot_fill_the_disk(release, local):
    nb = appended(notebook(release, "lab", "solution"), """
import os
block = b"0" * (100 << 20)
for i in range(40):  # 4 GB in files under the per-file limit
    with open(f"fill-{i}.bin", "wb") as f:
        f.write(block)
""")
    results = local(nb, "lab")
    assert "wrote more than" in results["output"]


def test_files_written_into_a_calls_folder_count_wherever_it_is(release, local, monkeypatch):
    """A call's folders are in memory where a memory cgroup bounds the kernel (sandbox.Jail): what the kernel writes
    into its reply folder there counts against its disk (and memory), and is removed with the jail."""
    nb = every_function_calls(appended(notebook(release, "lab", "blank"), """
import os, sys
import time
FILLED = []
def fill_the_reply_folder():
    if FILLED:  # once a kernel
        return None
    FILLED.append(True)
    frame, block = sys._getframe(1), b"0" * (100 << 20)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, str) and value.endswith("out") and os.path.isdir(value) and os.access(value, os.W_OK):
                for i in range(12):  # 1.2 GB in files under the per-file limit
                    with open(os.path.join(value, f"fill-{i}.bin"), "wb") as f:
                        f.write(block)
                time.sleep(3)  # the guard polls twice a second
                return None
        frame = frame.f_back
"""), "return fill_the_reply_folder()")
    made, scratch_folder = [], cleanup.scratch_folder
    monkeypatch.setattr(cleanup, "scratch_folder", lambda kind, **how: made.append(scratch_folder(kind, **how)) or made[-1])
    results = local(nb, "lab")
    assert "wrote more than 1 GB" in results["output"], results["output"]
    assert made and not [folder for folder in made if os.path.lexists(folder)]  # the calls' folders too, wherever they were


def test_files_deleted_while_open_still_count_against_the_disk(release, local):
    """A file unlinked while open is in no folder the guard walks, and still fills the disk."""
    nb = appended(notebook(release, "lab", "solution"), """
import os, time
block, kept = b"0" * (200 << 20), []
for i in range(7):  # 1.4 GB in files under the per-file limit, each deleted before it is written
    f = open(f"gone-{i}.bin", "wb")
    os.unlink(f"gone-{i}.bin")
    f.write(block)
    f.flush()
    kept.append(f)
time.sleep(5)  # the guard polls twice a second
""")
    results = local(nb, "lab", "off")  # the machine's /var/tmp and the work folder: no tmpfs of its own
    assert "wrote more than" in results["output"]


def test_replies_that_break_the_parser_get_a_plain_reason(release, local):
    nb = every_function_calls(appended(notebook(release, "lab", "blank"), """
import os, sys
def deep_reply():
    frame = sys._getframe(1)
    while "_write_json" not in frame.f_globals:
        frame = frame.f_back
    frame.f_globals["_write_json"] = lambda out_dir, name, data: open(os.path.join(out_dir, name), "w").write("[" * 2_000_000)
"""), "deep_reply()")
    results = local(nb, "lab")
    assert results["score"] == 0 and "internal grader error" not in json.dumps(results)
    assert "unreadable" in visible_text(results)
