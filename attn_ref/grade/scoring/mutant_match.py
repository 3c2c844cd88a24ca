"""Naming the misconception: a failed probe whose outputs match, within tolerance, what one of the task's
declared mutants returns on the same inputs is told that mistake, in the mutant's words, never a value.

The mutants run in a process of their own (mistakes_runner.py, with the students' interpreter, which has
torch: the grader's has not), started at the first failed probe of a grading and kept for the rest of it.
Only trusted code and data reach it (the assignment's helpers and mutants, and inputs the grader made);
the student's outputs are compared here, on the trusted side, with NumPy.
"""

from __future__ import annotations

import json
import selectors
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..checks_json import FunctionUnit, Probe
from ..isolation.image import HelperProcess, ImageError
from ..settings import MUTANTS_REPLY_TIMEOUT
from ..student_python import MISTAKES_RUNNER
from . import comparators as scoring
from .inputs import Input

RUNNER = MISTAKES_RUNNER


class MistakeRunner:
    """The mutants' process of one grading: started on first use, ended with ``close``."""

    def __init__(self, python: str, helpers: str, image: Path | None = None, reply_timeout: float = MUTANTS_REPLY_TIMEOUT):
        self.python, self.helpers, self.image = python, helpers, image  # image: the batch's kernel image, if any
        self.reply_timeout = reply_timeout  # seconds for one probe's mutants (settings.Limits.mutants_reply)
        self.process: subprocess.Popen | HelperProcess | None = None
        self.broken = False
        self.folder = Path(tempfile.mkdtemp(prefix="attn-ref-mistakes-"))

    def _start(self) -> None:
        if self.image is not None:  # torch is imported there already
            try:
                self.process = HelperProcess(self.image, RUNNER.read_text(), self.folder, str(RUNNER))
            except ImageError:
                self.process = None
        if self.process is None:
            self.process = subprocess.Popen([self.python, "-I", str(RUNNER)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=self.folder)
        self._send({"helpers": self.helpers})

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def outputs(self, task: FunctionUnit, probe: Probe, args: list[Input]) -> dict[int, list]:
        """{mutant index: its outputs (arrays or numbers)} on these inputs; {} if the runner cannot run."""
        if self.broken:
            return {}
        try:
            if self.process is None:
                self._start()
            folder = Path(tempfile.mkdtemp(dir=self.folder))
            spec = []
            for i, a in enumerate(args):
                if a.kind == "array":
                    np.save(folder / f"arg{i}.npy", a.data, allow_pickle=False)
                    spec.append({"name": a.name, "file": f"arg{i}.npy", "keyword": a.keyword})
                else:
                    spec.append({"name": a.name, "value": a.data, "keyword": a.keyword})
            self._send({"folder": str(folder), "function": task.function, "framework": task.framework,
                        "dtype": probe.dtype, "args": spec,
                        "mutants": [[i, m.source] for i, m in enumerate(task.mistakes)]})
            reply = json.loads(_readline(self.process, self.reply_timeout))
            return {int(i): _loaded(folder, r["outputs"]) for i, r in reply["results"].items() if "outputs" in r}
        except (OSError, ValueError, KeyError, TimeoutError):
            self.broken = True  # the hint is optional: grading goes on without it
            return {}

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


def _loaded(folder: Path, outputs: list[dict]) -> list:
    return [np.load(folder / o["file"], allow_pickle=False) if "file" in o else o.get("value") for o in outputs]


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


def matching(task: FunctionUnit, probe: Probe, student: list, reference: list, mutant_outputs: dict[int, list]) -> str:
    """The description of the first mutant whose outputs the student's match and the reference's do not."""
    rtol, atol = scoring.tolerance(probe)
    rtol = max(rtol, scoring.scalar_rtol(probe)) if not any(isinstance(r, np.ndarray) and r.ndim for r in reference) else rtol
    for index, outputs in sorted(mutant_outputs.items()):
        if len(outputs) != len(student) or len(outputs) != len(reference):
            continue
        if all(_same(s, m, rtol, atol) for s, m in zip(student, outputs)) and not all(
                _same(m, r, rtol, atol) for m, r in zip(outputs, reference)):
            return task.mistakes[index].says
    return ""
