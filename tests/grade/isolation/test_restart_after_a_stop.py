"""A kernel the supervisor's guard stopped is restarted by its grading process; the guard's poll can find the ended
kernel over its bound after the cgroup's OOM killer ended it, and then ends what the cgroup holds: the new kernel,
starting. Such a failed start is tried once more (Kernel.restart), and only after a stop."""

from __future__ import annotations

import pytest

from attn_ref.grade.isolation.kernel import Kernel, KernelStartError


class _Jail:
    def __init__(self):
        self.notes: list[str] = []
        self.cleared = 0

    def stopped(self) -> list[str]:
        return list(self.notes)

    def clear_calls(self) -> None:
        self.cleared += 1

    def kill_processes(self) -> int:
        return 0


def _kernel(jail: _Jail, starts: list[str]) -> Kernel:
    """A Kernel whose starts follow ``starts`` ("ok", "killed by the guard": a stop noted, then a failed start, "fails")."""
    kernel = object.__new__(Kernel)
    kernel.jail, kernel.km = jail, None
    kernel.kc = kernel.context = kernel.log = kernel.folder = None
    kernel.generation, kernel.stops_before, kernel.before_restart = 1, 0, None
    plan = iter(starts)

    def start():
        kernel.generation += 1
        kernel.stops_before = len(jail.stopped())
        what = next(plan)
        if what == "killed by the guard":
            jail.notes.append("its processes used more than 3 GB of memory together")
        if what != "ok":
            raise KernelStartError("the notebook's kernel did not start (it exited)")

    kernel._start = start
    return kernel


def test_a_start_the_guard_ended_is_tried_again():
    jail = _Jail()
    kernel = _kernel(jail, ["killed by the guard", "ok"])
    kernel.restart()
    assert kernel.generation == 3 and jail.cleared == 1


def test_a_start_after_a_stop_of_the_kernel_before_is_tried_again():
    jail = _Jail()
    jail.notes.append("the notebook wrote more than 1 GB to disk")  # the guard ended the kernel that ran, then the new one
    kernel = _kernel(jail, ["fails", "ok"])
    kernel.restart()
    assert kernel.generation == 3


def test_a_failed_start_with_no_stop_is_not_tried_again():
    kernel = _kernel(_Jail(), ["fails", "ok"])
    with pytest.raises(KernelStartError):
        kernel.restart()


def test_only_once():
    jail = _Jail()
    kernel = _kernel(jail, ["killed by the guard", "killed by the guard", "ok"])
    with pytest.raises(KernelStartError):
        kernel.restart()
