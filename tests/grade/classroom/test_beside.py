"""beside(): the gradebook's plots drawn in a forked child while the report is written; at once where this process
has another thread (a fork copies one thread: a lock another holds would stay held); a child that failed says so."""

from __future__ import annotations

import os
import threading

from attn_ref.grade.classroom.beside import beside


def test_the_work_runs_in_a_child_and_its_files_stay(tmp_path):
    def work():
        (tmp_path / "pid").write_text(str(os.getpid()))

    wait = beside(work)
    assert wait() is True
    assert int((tmp_path / "pid").read_text()) != os.getpid()


def test_a_child_that_failed_says_so(tmp_path):
    def work():
        raise RuntimeError("no plot")

    assert beside(work)() is False


def test_with_another_thread_the_work_runs_here_at_once(tmp_path):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        ran = []
        wait = beside(lambda: ran.append(os.getpid()))
        assert ran == [os.getpid()] and wait() is True
    finally:
        stop.set()
        other.join()


def test_the_child_is_named(tmp_path):
    def work():
        (tmp_path / "name").write_text(open("/proc/self/comm").read().strip())

    assert beside(work, "attn-ref plots")() is True
    assert (tmp_path / "name").read_text() == "attn-ref plots"
