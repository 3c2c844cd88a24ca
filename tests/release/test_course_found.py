"""The course a verb works on without --course is the one the instructor stands in, found from the working
folder, said on stderr; never the checkout attn-ref was installed from (before: `attn-ref answers` in a second
clone showed the first clone's course, and `attn-ref new` would have written into it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _attn_ref(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attn_ref", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_verb_finds_the_course_at_or_above_the_working_folder_and_says_which(tmp_path):
    clone = tmp_path / "second-clone"
    shutil.copytree(REPO / "course", clone / "course", ignore=shutil.ignore_patterns("__pycache__", ".attn-ref-cache"))
    for where in (clone, clone / "course", clone / "course" / "lab" / "c3"):
        done = _attn_ref("answers", "--only", "practice", cwd=where)
        assert done.returncode == 0, done.stderr
        assert f"course: {clone / 'course'}" in done.stderr and "q2_scores" in done.stdout


def test_no_course_here_is_said_with_what_to_do(tmp_path):
    done = _attn_ref("answers", cwd=tmp_path)
    assert done.returncode == 2 and "no course in" in done.stderr and "--course DIR" in done.stderr
    assert "Traceback" not in done.stderr


def test_new_starts_a_course_in_the_working_folder_never_in_the_installed_checkout(tmp_path):
    before = sorted(p.name for p in (REPO / "course").iterdir())
    done = _attn_ref("new", "week32", "--task", "c1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "course" / "registry.py").is_file() and (tmp_path / "course" / "week32" / "c1" / "task.py").is_file()
    assert sorted(p.name for p in (REPO / "course").iterdir()) == before
    assert "next: attn-ref build --only week32 --out week32-release" in done.stdout  # a relative path, as the docs give
