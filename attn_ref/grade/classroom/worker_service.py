"""A Dask worker's grader: one process per worker that grades submission after submission, so that the
grader's imports, the sandbox's probes, the autograder and the kernel image (isolation/image.py: numpy and
torch imported once) are paid once per worker, not once per submission.

Started by the worker (cluster.py) from the autograder zip's own bundled grader (the zip's files first on the
path), as `python -m attn_ref.grade.classroom.worker_service AUTOGRADER [--require-isolation]`. It is the
trusted side, exactly as `attn-ref grade DIR --jobs N`'s supervisor is: the same Supervisor forks a grading
process per submission, gives it a jail (a fresh uid as root, bubblewrap's namespaces where they work), and
starts its kernel from the image where that keeps kernels apart (image.why_not). Its channel to the worker is
its standard input and output (pipes: no path, no port), one JSON line each way per submission (the wire
format below: ``Request``, ``Reply``). It ends its gradings and its image when its input closes, when it is
terminated, or when its worker dies (PARENT_ENV). Standard output carries replies only.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..results import ResultsError
from ..settings import Limits

PARENT_ENV = "ATTN_REF_PARENT_PID"  # the worker's pid: its grader ends (and ends its kernels) with it
REFUSED = 3  # the exit code of a grader that cannot isolate its kernels (--require-isolation)
UNSANDBOXED = ("refusing to grade: kernels would run unsandboxed as this user (not root, and no working user "
               "namespaces for bubblewrap)")  # what such a grader says, on the command line and to its worker
MAX_LINE = 1 << 16  # a request or a reply (results travel as a file)


class WireError(ResultsError):
    """A line between a worker and its grader that is not what the wire format says."""


def _field(data: dict, key: str, kind: type | tuple[type, ...], where: str):
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise WireError(f"{where}: {key!r} is not {getattr(kind, '__name__', 'of the expected kind')}")
    return value


def _line(data: dict) -> bytes:
    line = json.dumps(data, ensure_ascii=True).encode() + b"\n"
    if len(line) > MAX_LINE:
        raise WireError(f"a line of {len(line)} bytes is over {MAX_LINE}")
    return line


def _parse(line: bytes, where: str) -> dict:
    if len(line) > MAX_LINE:
        raise WireError(f"{where}: a line of {len(line)} bytes is over {MAX_LINE}")
    try:
        data = json.loads(line)
    except ValueError:
        raise WireError(f"{where}: not JSON") from None
    if not isinstance(data, dict):
        raise WireError(f"{where}: not an object")
    return data


@dataclass(frozen=True)
class Request:
    """One submission to grade: its notebook (a file in the worker's private folder), where its results go,
    its time limits (the fields a command line sets: Limits.to_flags) and its submitters (or None)."""

    notebook: str
    results: str
    limits: dict[str, float]
    submitters: tuple | None = None

    @classmethod
    def of(cls, notebook: Path, results: Path, limits: Limits, submitters: tuple | None) -> Request:
        from ..settings import FLAGS

        return cls(str(notebook), str(results), {name: float(getattr(limits, name)) for name in FLAGS},
                   None if submitters is None else tuple(submitters))

    def to_line(self) -> bytes:
        return _line({"notebook": self.notebook, "results": self.results, "limits": self.limits,
                      "submitters": None if self.submitters is None else list(self.submitters)})

    @classmethod
    def from_line(cls, line: bytes) -> Request:
        from ..settings import FLAGS

        data = _parse(line, "a request")
        limits = _field(data, "limits", dict, "a request")
        if set(limits) != set(FLAGS) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                and math.isfinite(v) and v > 0 for v in limits.values()):
            raise WireError(f"a request: 'limits' must give {sorted(FLAGS)}, each a positive number of seconds")
        submitters = data.get("submitters")
        if submitters is not None and not (isinstance(submitters, list) and all(isinstance(s, dict) for s in submitters)):
            raise WireError("a request: 'submitters' is neither null nor a list of objects")
        return cls(_field(data, "notebook", str, "a request"), _field(data, "results", str, "a request"),
                   {k: float(v) for k, v in limits.items()}, None if submitters is None else tuple(submitters))

    @property
    def time_limits(self) -> Limits:
        return Limits(**self.limits)  # its keys are Limits' fields (settings.FLAGS), checked where the line is read


class ReplyState(str, Enum):
    READY = "ready"  # the first line: the grader is up (``note``: how its kernels start)
    REFUSED = "refused"  # the first line: it will not grade here (``note``: why); it then exits REFUSED
    GRADED = "graded"  # results written to the request's file (``note``: how its kernel started)


@dataclass(frozen=True)
class Reply:
    state: ReplyState
    note: str = ""

    def to_line(self) -> bytes:
        return _line({"state": self.state.value, "note": self.note[:2000]})

    @classmethod
    def from_line(cls, line: bytes) -> Reply:
        data = _parse(line, "the worker's grader")
        try:
            state = ReplyState(data.get("state"))
        except ValueError:
            raise WireError("the worker's grader: an unknown state") from None
        return cls(state, _field(data, "note", str, "the worker's grader"))


# ---- the service (in its own process) ----------------------------------------------------------------------

def _terminated(signum, frame):
    """The first SIGTERM ends the loop: the Supervisor ends its gradings, their kernels and the image on the way
    out. A second one (the worker's death can deliver more than one) must not cut that cleanup short and leave a
    kernel running: it is ignored from now on (the worker kills a grader that does not end in time)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _replies() -> int:
    """A private copy of standard output for replies; fd 1 then goes to standard error, so that nothing
    printed by the grader or a library can be read as a reply."""
    replies = os.dup(1)
    os.dup2(2, 1)
    return replies


def _say(fd: int, reply: Reply) -> None:
    data = memoryview(reply.to_line())
    while data:
        data = data[os.write(fd, data):]


def serve(autograder: str, require_isolation: bool) -> int:
    """Grade each request read from standard input until it closes; returns the exit code."""
    from ..core import make_job, prepare, warm_up
    from ..isolation.cleanup import die_with_parent, make_undumpable
    from ..isolation.sandbox import resolve
    from ..isolation.watchdog import Supervisor
    from ..results import plain_results, write_results

    signal.signal(signal.SIGTERM, _terminated)
    if os.environ.get(PARENT_ENV, "").isdigit():
        die_with_parent(int(os.environ[PARENT_ENV]))
    if os.geteuid() != 0:
        make_undumpable()  # a kernel running as this user cannot read this process's environment or memory
    replies = _replies()
    plan = resolve(None)
    if require_isolation and plan.unsandboxed:
        _say(replies, Reply(ReplyState.REFUSED, UNSANDBOXED))
        return REFUSED
    loaded, plan = prepare(autograder, plan)
    warm_up()  # before the supervisor forks a grading process per submission
    supervisor = Supervisor(plan, image=True)
    try:
        supervisor.start_image()  # now, while the worker waits for this line, not during the first submission
        _say(replies, Reply(ReplyState.READY, supervisor.kernel_start))
        for line in sys.stdin.buffer:
            request = Request.from_line(line)
            limits = request.time_limits
            job = make_job("submission", Path(request.notebook), loaded, plan, limits, request.submitters)
            supervisor.margin = limits.margin
            [done] = supervisor.finished([job])
            write_results(Path(request.results), plain_results(done.results))
            _say(replies, Reply(ReplyState.GRADED, supervisor.kernel_start))
    except KeyboardInterrupt:
        return 130
    finally:
        supervisor.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("-"):
        print("usage: python -m attn_ref.grade.classroom.worker_service AUTOGRADER [--require-isolation]", file=sys.stderr)
        return 2
    return serve(argv[0], "--require-isolation" in argv[1:])


if __name__ == "__main__":
    sys.exit(main())
