"""A run's scratch folders (cleanup.scratch_folder) and the removal of a killed run's (cleanup.remove_leftovers):
only folders whose run is gone are removed, whoever looks; a living run's are never touched, even from another
PID namespace, where its process id means nothing (a pid check there removed a grading's folders mid-run)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hostile import ROOT_ONLY

from attn_ref.grade.isolation import cleanup

MAKE_AND_WAIT = """
import sys, tempfile, time
tempfile.tempdir = sys.argv[1]
from attn_ref.grade.isolation import cleanup
print(cleanup.scratch_folder("grade").name, flush=True)
time.sleep(300)
"""


def _maker(scratch: Path, *wrapper: str) -> tuple[subprocess.Popen, str]:
    run = subprocess.Popen([*wrapper, sys.executable, "-c", MAKE_AND_WAIT, str(scratch)], stdout=subprocess.PIPE, text=True)
    return run, run.stdout.readline().strip()


@pytest.fixture
def scratch(monkeypatch):
    folder = Path(tempfile.mkdtemp(prefix="attn-ref-test-"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _removing_leftovers(scratch: Path, *wrapper: str) -> None:
    living, name = _maker(scratch, *wrapper)
    killed, gone = _maker(scratch, *wrapper)
    try:
        killed.kill()  # with unshare, --kill-child ends the process inside
        killed.wait()
        time.sleep(0.2)  # its last process (unshare's child) is gone too
        ours = cleanup.scratch_folder("image")
        assert cleanup.remove_leftovers() == 1
        left = sorted(p.name for p in scratch.iterdir())
        assert name in left and ours.name in left and gone not in left
        assert len([n for n in left if n.endswith(".lock")]) == 2  # the living run's and ours; the killed run's removed
    finally:
        living.kill()
        living.wait()


def test_a_killed_runs_folders_are_removed_and_a_living_runs_kept(scratch):
    _removing_leftovers(scratch)


@ROOT_ONLY
def test_a_living_run_in_another_pid_namespace_keeps_its_folders(scratch):
    """Its process id is another's here, or no one's: its lock, held in the shared file, is what tells."""
    _removing_leftovers(scratch, "unshare", "--pid", "--fork", "--kill-child", "--")


def test_folders_of_other_users_or_not_folders_are_never_removed(scratch):
    (scratch / f"attn-ref-run-{'0' * 8}.lock").write_text("")  # a lock no one holds
    (scratch / f"attn-ref-grade-{'0' * 8}-1").write_text("a file, not a folder")
    link = scratch / f"attn-ref-grade-{'0' * 8}-2"
    link.symlink_to(scratch / "elsewhere")
    (scratch / "elsewhere").mkdir()
    assert cleanup.remove_leftovers() == 0
    assert (scratch / "elsewhere").is_dir() and link.is_symlink() and (scratch / f"attn-ref-grade-{'0' * 8}-1").is_file()


MAKE_IN_MEMORY = """
import sys, tempfile, time
tempfile.tempdir = sys.argv[1]
from attn_ref.grade.isolation import cleanup
cleanup.memory_folder = lambda: sys.argv[2]
print(cleanup.scratch_folder("exchange", in_memory=True).name, flush=True)
time.sleep(300)
"""


def test_a_killed_runs_folders_in_memory_are_removed_too(scratch, monkeypatch):
    """The calls' folders (sandbox.Jail) are in memory (/dev/shm) where a memory cgroup bounds the kernel: a run killed
    outright leaves them there, with their own lock file, and the next run removes them as it does the others."""
    memory = Path(tempfile.mkdtemp(prefix="attn-ref-test-memory-", dir=scratch.parent))
    try:
        killed = subprocess.Popen([sys.executable, "-c", MAKE_IN_MEMORY, str(scratch), str(memory)], stdout=subprocess.PIPE,
                                  text=True)
        name = killed.stdout.readline().strip()
        assert name.startswith("attn-ref-exchange-") and (memory / name).is_dir() and not list(scratch.iterdir())
        killed.kill()
        killed.wait()
        monkeypatch.setattr(cleanup, "memory_folder", lambda: str(memory))
        assert cleanup.remove_leftovers() == 1
        assert not list(memory.iterdir())  # the folder and its run's lock file
    finally:
        shutil.rmtree(memory, ignore_errors=True)
