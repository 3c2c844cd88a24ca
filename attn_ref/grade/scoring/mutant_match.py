"""Naming the misconception: a failed probe on which the student's function behaves, in everything the probe
measures, as one of the task's declared mutants does on the same inputs, and that mutant unlike the
reference, is told that mistake, in the mutant's words, never a value.

What is compared is what the kernel reports of a call that returned, for the student and for each mutant
alike: the values returned (their kind, dtype, device and shape, and their values within the probe's
tolerance, NaN for NaN, bool masks exactly), the inputs as they were after the call (where the probe looks
at them: written into in the same way), the rows projected through each counted weight, and whether
autograd ran (where the probe asks for it). A call that raised names a mistake only when the mutants of one
mistake, and no other, raise the very same error on the same inputs, and the instructor marked them as named
by their error (a shape mismatch between two dimensions the probe drew apart; a tensor left on the CPU on
the meta line, where every form of that mistake raises one message). A mutant differs from the reference
when it fails the probe itself. Where two mutants match, the one written for this probe (its `# must
fail:` names it) is told before one that is not, and a stub (`# stub`: it does none of the task) last;
where mutants of different words match equally (both written for this probe, or neither: c4's inverse mask and its
diagonal left out both give [[False]] for T = 1), none is told, since either name may be false. A name is told
only where the task's other failed lines agree (LineMatch.contradicted_by, applied by functions.grade_task): a
line where a mutant of those words fails and returns values other than the student's shows the match was a
coincidence (a float16 gradient underflowing to 0 on one line looks like a detached state there, and only there).

The mutants run in a process of their own (mistakes_runner.py, with the students' interpreter, which has
torch: the grader's has not), started at the first failed probe of a grading and kept for the rest of it;
each is called through the kernel's own harness on the files of the student's call, on the probe's device
(CPU or meta); a mutant marked `# keeps state between calls` (a module-level cache) is called first on the
task's earlier calls it has not been called on (their replies unread), so that it holds what the student's
function held, as in the seed sweep, where every mutant is called on every line in order. Only trusted code and data reach it (the assignment's helpers and mutants, the harness, and
inputs the grader made); the student's reply and the mutants' are compared here, on the trusted side.
"""

from __future__ import annotations

import itertools
import json
import selectors
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...portable import typerules
from ..checks_json import FunctionUnit, Mistake, Probe
from ..inkernel.wire import MalformedReply, Output, parse_call_reply
from ..isolation.image import HelperProcess, ImageError
from ..isolation.safeio import in_memory_tempdir
from ..isolation.sandbox import trusted_runner_env
from ..session import HARNESS_SOURCE
from ..settings import MUTANTS_REPLY_TIMEOUT
from ..student_python import MISTAKES_RUNNER
from . import comparators as scoring
from .inputs import Input

RUNNER = MISTAKES_RUNNER
ERROR_NAMES = "# its error names it"  # a mutant's leading comment: a student raising its very error is told its words
KEEPS_STATE = "# keeps state between calls"  # a mutant's leading comment: it first hears the task's calls it missed


class MistakeRunner:
    """The mutants' process of one grading: started on first use, ended with ``close``."""

    def __init__(self, python: str, helpers: str, image: Path | None = None, reply_timeout: float = MUTANTS_REPLY_TIMEOUT):
        self.python, self.helpers, self.image = python, helpers, image  # image: the batch's kernel image, if any
        self.reply_timeout = reply_timeout  # seconds for one probe's mutants (settings.Limits.mutants_reply)
        self.process: subprocess.Popen | HelperProcess | None = None
        self.broken = False
        self.folder = in_memory_tempdir("attn-ref-mistakes-")  # the calls' files: in memory where it can be
        self.calls_heard: dict[str, int] = {}  # task -> its calls the mutants were called on (replayed or compared)

    def _start(self) -> None:
        if self.image is not None:  # torch is imported there already
            try:
                self.process = HelperProcess(self.image, RUNNER.read_text(), self.folder, str(RUNNER))
            except ImageError:
                self.process = None
        if self.process is None:
            self.process = subprocess.Popen([self.python, "-I", str(RUNNER)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=self.folder,
                                            env=trusted_runner_env())
        self._send({"helpers": self.helpers, "harness": HARNESS_SOURCE})

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def heard(self, task: FunctionUnit) -> int:
        """How many of the task's calls the mutants have been called on in this grading."""
        return self.calls_heard.get(task.name, 0)

    def observations(self, task: FunctionUnit, files: dict[str, bytes],
                     before: list[dict[str, bytes]] = ()) -> dict[int, scoring.Observation]:
        """{mutant index: what the harness reported of its call} on the call's files (functions.call_files: the
        student's call.json and inputs); {} if the runner cannot run. ``before``: the files of the task's calls
        the student's function got since ``heard``, which each mutant marked ``# keeps state between calls`` is
        called on first (mistakes_runner.py; the others hold nothing from one call to the next)."""
        if self.broken:
            return {}
        try:
            if self.process is None:
                self._start()
            folder, earlier = self._written(files), [str(self._written(f)) for f in before]
            self.calls_heard[task.name] = self.heard(task) + len(before) + 1
            self._send({"folder": str(folder), "before": earlier, "function": task.function,
                        "replayed": replayed(task),
                        "mutants": [[i, m.source] for i, m in enumerate(task.mistakes)]})
            reply = json.loads(_readline(self.process, self.reply_timeout))
            found = {}
            for i in (int(i) for i, r in reply["results"].items() if "reply" in r):
                try:
                    found[i] = scoring.Observation(parse_call_reply((folder / f"m{i}" / "reply.json").read_bytes()),
                                                   folder / f"m{i}", None)
                except (OSError, MalformedReply):
                    continue  # this mutant left no reply to compare with
            return found
        except (OSError, ValueError, KeyError, TimeoutError):
            self.broken = True  # the hint is optional: grading goes on without it
            return {}

    def _written(self, files: dict[str, bytes]) -> Path:
        folder = Path(tempfile.mkdtemp(dir=self.folder))
        for name, data in files.items():
            (folder / name).write_bytes(data)
        return folder

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _readline(process: subprocess.Popen | HelperProcess, timeout: float) -> str:
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise TimeoutError("the mutants' process did not answer")
    line = process.stdout.readline()
    if not line:
        raise ValueError("the mutants' process ended")
    return line


def _same(got, want, rtol: float, atol: float) -> bool:
    """Whether one student output equals one mutant output within the probe's tolerance."""
    if want is None or got is None:
        return False
    if isinstance(want, np.ndarray) and want.ndim:
        got = np.asarray(got)
        if got.shape != want.shape or got.dtype.kind not in "biuf":
            return False
        if want.dtype == bool:
            return bool(np.array_equal(got.astype(bool), want))
        got, want = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isfinite(want)  # a NaN where the mutant has one is the same mistake (an unshifted softmax)
        if not np.array_equal(bad, ~np.isfinite(got)):
            return False
        if bad.all():
            return True
        ok = ~bad
        scale = float(np.abs(want[ok]).max())
        return bool(np.all(np.abs(got[ok] - want[ok]) <= rtol * np.abs(want[ok]) + atol * scale))
    try:
        return scoring.scalar_error(float(np.asarray(got)), float(np.asarray(want))) <= rtol
    except (TypeError, ValueError):
        return False


def _same_value(a: Output, student: scoring.Observation, b: Output, mutant: scoring.Observation, rtol: float,
                atol: float) -> bool:
    """One returned value (or input after the call) of the student's against the mutant's: the same kind, dtype,
    device and shape, and the same values within tolerance (a meta tensor has none to compare)."""
    if a.kind != b.kind:
        return False
    if a.kind == "scalar":
        got, want = typerules.read("scalar", a.value), typerules.read("scalar", b.value)
        return not got[1] and not want[1] and _same(got[0], want[0], rtol, atol)
    if a.kind == "other":
        return a.type == b.type
    if (a.dtype, a.device, a.shape) != (b.dtype, b.device, b.shape) or (a.file is None) != (b.file is None):
        return False
    return a.file is None or _same(student.array(a), mutant.array(b), rtol, atol)


def _same_values(a: tuple[Output, ...] | None, student: scoring.Observation, b: tuple[Output, ...] | None,
                 mutant: scoring.Observation, rtol: float, atol: float) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(_same_value(x, student, y, mutant, rtol, atol) for x, y in zip(a, b))


def same_behaviour(probe: Probe, student: scoring.Observation, mutant: scoring.Observation, rtol: float,
                   atol: float) -> bool:
    """Whether the student's call and the mutant's look the same to this probe (module docstring)."""
    s, m = student.reply, mutant.reply
    if not (s.ok and m.ok):
        return False  # an error names no mistake: many share one (a shape mismatch, a tensor built on the CPU)
    if (s.form, s.count) != (m.form, m.count) or not _same_values(s.outputs, student, m.outputs, mutant, rtol, atol):
        return False
    if not _same_values(s.inputs_after, student, m.inputs_after, mutant, rtol, atol):
        return False  # the same inputs written into, in the same way
    if probe.options.get("count_projections") and s.projected_rows != m.projected_rows:
        return False
    return "autograd_used" not in probe.checks or s.autograd_used == m.autograd_used


def error_could_name(task: FunctionUnit, student: scoring.Observation) -> bool:
    """Whether a call that raised could name a mistake at all (``_same_error``): it left an error message and the
    task has a mutant marked ``# its error names it``. Where not, the mutants need not run."""
    return bool(student.reply.error) and any(ERROR_NAMES in m.source for m in task.mistakes)


def _same_error(task: FunctionUnit, student: scoring.Observation, mutants: dict[int, scoring.Observation]) -> str:
    """The words of the one mistake whose mutants raise, on these inputs, the very error the student's call
    raised ("" if none, or if mutants of different words raise it). Only a mutant marked ``# its error names
    it`` is named by its error, and only where every mutant raising that very message is marked and all say
    the same words: the instructor marks a mutant whose error no other likely mistake raises (a shape
    mismatch between two sizes the probes draw apart; a tensor made on the CPU, on the meta line, in words
    true of every way of making one there), and leaves unmarked one whose clash another mistake makes too
    (c6's K/V split at the middle clashes d_k with d_v as swapping the caches does)."""
    error = student.reply.error or ""
    if not error_could_name(task, student):
        return ""
    raising = {task.mistakes[i].source for i, m in mutants.items() if not m.reply.ok and m.reply.error == error}
    says = {m.says for m in task.mistakes if m.source in raising}
    if len(says) != 1 or not all(ERROR_NAMES in source for source in raising):
        return ""
    return says.pop()


def replayed(task: FunctionUnit) -> list[int]:
    """The task's mutants marked ``# keeps state between calls`` among their leading comments (by index)."""
    return [i for i, m in enumerate(task.mistakes)
            if KEEPS_STATE in itertools.takewhile(lambda line: line.startswith("#"), (line.strip() for line in m.source.splitlines()))]


def _declared(source: str) -> tuple[str, bool]:
    """A mutant's `# must fail:` text and whether it is marked `# stub`, from its leading comments."""
    must_fail, stub = "", False
    for line in source.splitlines():
        if not line.startswith("#"):
            break
        text = line[1:].strip()
        if text.startswith("must fail:"):
            must_fail = text.removeprefix("must fail:").strip()
        stub |= text == "stub"
    return must_fail, stub


def _preference(mistake: Mistake, probe: Probe) -> tuple[bool, bool]:
    """Sorts first the mutant written for this probe, last a stub."""
    must_fail, stub = _declared(mistake.source)
    return not (must_fail and must_fail in probe.name), stub


@dataclass(frozen=True)
class LineMatch:
    """What the mutants say of one failed line: the words told ("" if none), the words of every mutant that fails
    the line and behaves as the student's call did, and of those that fail it, returned, and behaved otherwise
    while the student's call returned too (evidence on the task's other lines: ``contradicted_by``)."""

    says: str = ""
    matched: frozenset[str] = frozenset()
    unmatched: frozenset[str] = frozenset()

    def contradicted_by(self, others: Iterable[LineMatch]) -> bool:
        """Whether another failed line of the task shows the student's function is not this mistake: there a
        mutant of these words fails and returns, and none of these words behaves as the student's call did
        (output that only happens to coincide on one line, as a float16 underflow to 0 is a detached state's 0)."""
        return any(self.says in other.unmatched and self.says not in other.matched for other in others)


def line_match(task: FunctionUnit, probe: Probe, sent: list[Input], reference: list, student: scoring.Observation,
               mutants: dict[int, scoring.Observation], failing: set[int] | None = None) -> LineMatch:
    """The mutant the student's call matches on this probe and the reference does not (its words, or "" if none),
    with what the other mutants failing this probe say (LineMatch). ``failing``: the mutants known to fail this
    probe on these inputs (the seed sweep scores every mutant anyway); without it each is scored here."""
    if not student.reply.ok:
        return LineMatch(_same_error(task, student, mutants))
    rtol, atol = scoring.tolerance(probe)
    if not any(isinstance(r, np.ndarray) and r.ndim for r in reference):
        rtol = max(rtol, scoring.scalar_rtol(probe))
    found, otherwise = [], set()
    for index, mutant in sorted(mutants.items()):
        try:
            differs = (index in failing) if failing is not None else not scoring.check_probe(task, probe, sent, reference, mutant, {})[0]
            if not differs:
                continue
            if same_behaviour(probe, student, mutant, rtol, atol):
                found.append(index)
            elif mutant.reply.ok:
                otherwise.add(task.mistakes[index].says)
        except scoring.MalformedOutput:
            continue  # a value that cannot be read matches nothing
    matched = frozenset(task.mistakes[i].says for i in found)
    if not found:
        return LineMatch("", matched, frozenset(otherwise))
    best = min(_preference(task.mistakes[i], probe) for i in found)
    says = {task.mistakes[i].says for i in found if _preference(task.mistakes[i], probe) == best}
    # two mistakes explain it equally well: naming either may be false
    return LineMatch(says.pop() if len(says) == 1 else "", matched, frozenset(otherwise))


def matching(task: FunctionUnit, probe: Probe, sent: list[Input], reference: list, student: scoring.Observation,
             mutants: dict[int, scoring.Observation], failing: set[int] | None = None) -> str:
    """The words of the mutant the student's call matches on this probe and the reference does not ("" if none)."""
    return line_match(task, probe, sent, reference, student, mutants, failing).says
