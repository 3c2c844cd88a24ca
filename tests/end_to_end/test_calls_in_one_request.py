"""A task's probes are called in one request to the kernel (scoring/functions.py: call_ahead; Session.calls), and
each call still keeps what a request of its own gave it: its own time limit, its own line charged for a crash or a
hang, the lines after a crash run in a fresh kernel, the lines after a hang left unrun.

c7's five lines, in order: window 3, window 1, window 9, window 4 (bool dtype), meta. The student's function
wraps the solution's, so every line it does not break passes."""

from __future__ import annotations

from conftest import max_scores, scores
from hostile import appended, notebook

WRAPPED = """
import os
import time
_right_window = sliding_window_mask

def sliding_window_mask(T, window, device=None):
    {body}
    return _right_window(T, window, device=device)
"""


def c7_lines(results: dict) -> str:
    return next(t["output"] for t in results["tests"] if t["name"].startswith("c7"))


def test_each_call_has_its_own_time_limit(release, local):
    """Five calls of 1.2 s each, with a limit of 2 s a call: together past one limit, each within its own."""
    nb = appended(notebook(release, "lab", "solution"), WRAPPED.format(body="time.sleep(1.2)"))
    results = local(nb, "lab", call_timeout=2)
    assert scores(results)["c7"] == max_scores(results)["c7"], c7_lines(results)
    assert not results["extra_data"]["timed_out"]


def test_a_call_that_crashes_the_kernel_costs_its_line_and_the_next_lines_run_in_a_fresh_kernel(release, local):
    nb = appended(notebook(release, "lab", "solution"), WRAPPED.format(body="if window == 1:\n        os._exit(1)"))
    results = local(nb, "lab")
    told = c7_lines(results)
    assert scores(results)["c7"] == max_scores(results)["c7"] - 2, told  # "window = 1" is worth 2
    assert "crashed the kernel" in told and "not run" not in told
    assert results["extra_data"]["kernel_restarts"] == 1
    assert {k: v for k, v in scores(results).items() if k != "c7"} == {k: v for k, v in max_scores(results).items() if k != "c7"}


def test_a_call_that_hangs_costs_its_line_and_the_lines_after_it_are_not_run(release, local):
    nb = appended(notebook(release, "lab", "solution"), WRAPPED.format(body="while window == 9:\n        pass"))
    results = local(nb, "lab", call_timeout=2)
    told = c7_lines(results)
    assert scores(results)["c7"] == 3 + 2, told  # window 3 and window 1 passed before it
    assert "did not finish" in told and "an earlier probe of this task did not finish" in told
    assert results["extra_data"]["timed_out"]


def test_the_lines_before_a_loop_deaf_to_interrupts_keep_their_verdicts(release, local):
    """The loop ignores the interrupt, so the kernel is restarted, which removes the calls' folders: the replies of
    the calls before it are read all the same."""
    deaf = "while window == 9:\n        try:\n            time.sleep(0.05)\n        except BaseException:\n            pass"
    nb = appended(notebook(release, "lab", "solution"), WRAPPED.format(body=deaf))
    results = local(nb, "lab", call_timeout=2)
    told = c7_lines(results)
    assert scores(results)["c7"] == 3 + 2, told
    assert "did not finish" in told and results["extra_data"]["kernel_restarts"] >= 1
