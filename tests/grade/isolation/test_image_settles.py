"""The kernel image started without waiting (a batch's first gradings start beside its imports): ``settled()`` tells,
without blocking, whether it is ready, or why it never will be; then it is ended (the kernels' requests queued on its
socket fail, and those kernels start afresh), and the supervisor says so in ``kernel_start``."""

from __future__ import annotations

import time

import pytest

from attn_ref.grade.isolation import image
from attn_ref.grade.isolation.image import ImageError, KernelImage
from attn_ref.grade.isolation.sandbox import resolve
from attn_ref.grade.isolation.watchdog import Supervisor

SAYS = """
import json, sys, time
time.sleep({delay})
sys.stdout.write(json.dumps({status}) + "\\n")
sys.stdout.flush()
{then}
"""


def _plan():
    plan = resolve()
    if image.why_not(plan):
        pytest.skip(f"no kernel image here: {image.why_not(plan)}")
    return plan


def _server(monkeypatch, delay: float, status: dict, then: str = "sys.stdin.read()") -> None:
    monkeypatch.setattr(image, "SERVER", SAYS.format(delay=delay, status=repr(status), then=then))


def _settle(started: KernelImage, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if started.settled(timeout=0.05):
            return True
    return False


def test_an_image_that_becomes_ready_is_ready_without_blocking_before(monkeypatch):
    _server(monkeypatch, 1.0, {"ready": True, "why": ""})
    started = KernelImage(_plan(), wait=False)
    try:
        assert started.settled() is False  # still importing: no wait
        assert _settle(started)
    finally:
        started.close()


@pytest.mark.parametrize(("status", "then", "why"), [({"ready": False, "why": "its imports left 3 threads"}, "", "3 threads"),
                                                    (None, "", "it exited while importing")])
def test_an_image_that_never_becomes_ready_is_ended_and_says_why(monkeypatch, status, then, why):
    _server(monkeypatch, 0.2, status, then) if status else monkeypatch.setattr(image, "SERVER", "import sys; sys.exit(1)")
    started = KernelImage(_plan(), wait=False)
    try:
        with pytest.raises(ImageError, match=why):
            _settle(started)
        assert started.process.poll() is not None  # ended: requests waiting on its socket fail, kernels start afresh
    finally:
        started.close()


def test_the_supervisor_starts_kernels_afresh_and_says_why(monkeypatch):
    _server(monkeypatch, 0.2, {"ready": False, "why": "its imports made a shared writable mapping"})
    supervisor = Supervisor(_plan(), jobs=2, image=True)
    try:
        supervisor.start_image(wait=False)
        assert supervisor.image is not None
        deadline = time.monotonic() + 10
        while supervisor.image is not None and time.monotonic() < deadline:
            time.sleep(0.05)
            supervisor._settle_image()
        assert supervisor.image is None
        assert supervisor.kernel_start == ("started afresh for each submission: no kernel image (its imports made a shared "
                                           "writable mapping)")
    finally:
        supervisor.close()
