"""A grading process sends its results, then ends its kernel (``jail.later``): the supervisor reports them and starts
the next submission meanwhile, and ends a grading process that takes longer than its grace to end."""

from __future__ import annotations

import time

import psutil

from attn_ref.grade.isolation import watchdog
from attn_ref.grade.isolation.sandbox import resolve
from attn_ref.grade.isolation.watchdog import Job, JobState, Supervisor


def _failed(reason, status, fault):
    return {"score": 0, "reason": reason}


def _job(key: str, folder, teardown: float) -> Job:
    def run(jail):
        (folder / f"{key}.started").write_text(repr(time.time()))
        jail.later.callback(lambda: (time.sleep(teardown), (folder / f"{key}.ended").write_text(repr(time.time()))))
        return {"score": 1, "key": key}

    return Job(key, run, _failed, 60)


def test_results_are_reported_and_the_next_submission_started_before_a_kernel_is_ended(tmp_path):
    before = {p.pid for p in psutil.Process().children(recursive=True)}  # another test's (a Dask resource tracker)
    supervisor = Supervisor(resolve(namespaces="off"), jobs=1)
    start, reported = time.time(), {}
    try:
        for item in supervisor.finished([_job("a", tmp_path, 2.0), _job("b", tmp_path, 2.0)]):
            reported[item.job.key] = (item.state, item.results, time.time())
    finally:
        supervisor.close()
    assert {key: (state, results["key"]) for key, (state, results, _) in reported.items()} == {
        "a": (JobState.GRADED, "a"), "b": (JobState.GRADED, "b")}
    assert reported["a"][2] - start < 1.8  # before a's teardown of 2 s ended
    b_started, a_ended = float((tmp_path / "b.started").read_text()), float((tmp_path / "a.ended").read_text())
    assert b_started < a_ended  # one submission graded at a time (jobs=1), its kernel ended beside the next
    assert not [p for p in psutil.Process().children(recursive=True) if p.pid not in before]  # each one reaped


def test_a_grading_process_that_does_not_end_after_its_results_is_ended(tmp_path, monkeypatch):
    monkeypatch.setattr(watchdog, "TEARDOWN_GRACE", 1.0)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    supervisor = Supervisor(resolve(namespaces="off"), jobs=1)
    start = time.monotonic()
    try:
        done = list(supervisor.finished([_job("stuck", tmp_path, 3600.0)]))
    finally:
        supervisor.close()
    assert [(item.state, item.results["key"]) for item in done] == [(JobState.GRADED, "stuck")]
    assert time.monotonic() - start < 10 and not (tmp_path / "stuck.ended").exists()
    assert not [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
