"""The seed sweep: every probe line's verdict on the solution, every mutant and every stub, under many seeds.

A verdict may not depend on the seed (correct work never loses a point under any seed; a bug is charged
under every one). `attn-ref check` runs this through the zip's own grader and fails the build on a line
whose verdict changes with the seed, naming the line and the implementation, and on a mutant that is not
named, in its own words, on a line it fails.

Each probe's inputs and reference are made here once per seed, as grading makes them (inputs.generate,
probe_rng); the implementations are called through the kernel's own harness in one trusted process
(student_python/sweep_runner.py: only the instructor's code runs there), and each reply is scored by the
grader's own comparators (check_probe) and named by its own matcher (mutant_match.matching). Only the
notebook kernel and its messages are left out, which makes a call about a hundred times cheaper: enough
for 1,500 seeds, the number that sees a verdict flipping under one seed in 500 with 95 % confidence
(1 − (1 − 1/500)^1500 ≈ 0.95).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..checks_json import FunctionUnit, Probe
from ..core import prepare
from ..inkernel.wire import MalformedReply, parse_call_reply
from ..isolation.safeio import UnsafeReply, in_memory_tempdir, read_reply
from ..isolation.sandbox import trusted_runner_env
from ..scoring import comparators
from ..scoring.functions import call_files
from ..scoring.inputs import generate, probe_rng, reference_outputs, seed_free
from ..scoring.mutant_match import KEEPS_STATE, matching
from ..session import HARNESS_SOURCE
from ..student_python import SWEEP_RUNNER
from . import MARGIN, stubs

SOLUTION = "solution"


@dataclass
class LineVerdicts:
    """One implementation's verdicts on one probe line, over the seeds swept."""

    own: str = ""  # a mutant's words, as a student whose outputs match it is told them
    passed: int = 0
    failed: int = 0
    raised: int = 0  # failed by raising (or by returning nothing): an error names no mistake
    named: int = 0  # failed, and named in the implementation's own words
    misnamed: dict[str, int] = field(default_factory=dict)  # failed, and named as another mutant: {its words: seeds}
    pass_seed: int | None = None  # the first seed it passed under
    fail_seed: int | None = None  # the first seed it failed under, and what it was told then
    fail_message: str = ""
    worst_error: float = 0.0  # the largest relative error measured on a seed it passed under
    rtol: float = 0.0  # the line's relative tolerance, which worst_error is read against
    pass_used: float = 0.0  # the largest share of its tolerance a passing seed's values took (comparators)
    miss_used: float | None = None  # the smallest share of it taken by a seed whose values missed (> 1), if any
    seeds: int = 0  # the seeds this line was called under
    failed_again: int = 0  # of ``failed``, under the seeds of the second sweep, where no name is asked (see sweep_task)

    def add(self, seed: int, ok: bool, message: str, error: float | None, says: str | None, raised: bool,
            used: float | None = None, again: bool = False) -> None:
        self.seeds += 1
        self.failed_again += again and not ok
        if ok:
            self.passed += 1
            self.pass_seed = seed if self.pass_seed is None else self.pass_seed
            self.worst_error = max(self.worst_error, error or 0.0)
            self.pass_used = max(self.pass_used, used or 0.0)
            return
        self.failed += 1
        self.raised += raised
        if used is not None and used > 1:  # missed on its values (not only on a shape, a dtype or an error)
            self.miss_used = used if self.miss_used is None else min(self.miss_used, used)
        if self.fail_seed is None:
            self.fail_seed, self.fail_message = seed, message
        if not says:  # not a mutant, not on a line that names (not CPU), or matching nothing
            return
        if says == self.own:
            self.named += 1
        else:
            self.misnamed[says] = self.misnamed.get(says, 0) + 1

    @property
    def near_its_tolerance(self) -> bool:
        """Whether a seed's values came within MARGIN of the line's tolerance, either way: a verdict that
        another seed might tip, so the line is swept again under proofs.SEEDS_FOR_ONE_IN_500 seeds."""
        return self.pass_used > 1 / MARGIN or (self.miss_used is not None and self.miss_used < MARGIN)

    def to_json(self) -> dict:
        return {"passed": self.passed, "failed": self.failed, "raised": self.raised, "named": self.named, "misnamed": self.misnamed,
                "pass_seed": self.pass_seed, "fail_seed": self.fail_seed, "fail_message": self.fail_message,
                "worst_error": self.worst_error, "rtol": self.rtol, "seeds": self.seeds, "failed_again": self.failed_again,
                "near_its_tolerance": self.near_its_tolerance}


class SweepRunner:
    """The trusted process that calls every implementation of one task through the harness."""

    def __init__(self, python: str, helpers: str, implementations: dict[str, str], folder: Path):
        self.folder = folder
        self.process = subprocess.Popen([python, "-I", str(SWEEP_RUNNER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, cwd=folder,
                                        env=trusted_runner_env())
        self._send({"harness": HARNESS_SOURCE, "helpers": helpers, "implementations": implementations})
        self.broken: dict[str, str] = json.loads(self._receive())["broken"]

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def _receive(self) -> str:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the sweep's runner ended (see its implementations' cells)")
        return line

    def run(self, inbox: Path, function: str, runs: list[tuple[str, Path, str | None, bool]]) -> dict[str, str]:
        """Call each (label, outbox, source run first, whether its namespace is made anew) on the inbox's call."""
        self._send({"inbox": str(inbox), "function": function,
                    "runs": [[label, str(out), src, fresh] for label, out, src, fresh in runs]})
        return json.loads(self._receive())["ran"]

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def _observe(outbox: Path) -> comparators.Observation | None:
    try:
        return comparators.Observation(parse_call_reply(read_reply(outbox, "reply.json")), outbox, None)
    except (FileNotFoundError, UnsafeReply, MalformedReply, OSError):
        return None


def _write(folder: Path, files: dict[str, bytes]) -> None:
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


@dataclass
class _TaskSweep:
    """One task's implementations, their runner and their verdicts so far."""

    task: FunctionUnit
    implementations: dict[str, str]  # label -> its cell ("" for the solution and the stubs: made per probe)
    own: dict[str, str]  # a declared mutant's label -> its words
    stub_labels: list[str]
    runner: SweepRunner
    folder: Path
    lines: dict[str, dict[str, LineVerdicts]] = field(default_factory=dict)

    def __post_init__(self):
        declared = {_as_declared(m.source): i for i, m in enumerate(self.task.mistakes)}
        self.mistake_of = {label: declared.get(_as_declared(source)) for label, source in self.implementations.items()}
        self.labels = [label for label in self.implementations if label not in self.runner.broken]
        self.lines = {label: {p.name: LineVerdicts(own=self.own.get(label, ""), rtol=comparators.tolerance(p)[0])
                              for p in self.task.probes if p.device != "cuda"} for label in self.labels}

    def _runs(self, probe: Probe, expected: list, labels: list[str], fresh: set[str]) -> list[tuple[str, Path, str | None, bool]]:
        """Each implementation's call: its outbox (emptied of a reply), a stub's cell for these inputs, and
        whether its namespace is made anew (the seed's first call: each seed is a submission of its own)."""
        runs = []
        for label in labels:
            outbox = self.folder / f"out{self.labels.index(label)}"
            outbox.mkdir(exist_ok=True)
            (outbox / "reply.json").unlink(missing_ok=True)  # a reply read is this call's or none
            kind = label.removeprefix("stub: ") if label in self.stub_labels else None
            runs.append((label, outbox, stubs.source(kind, self.task, probe, expected) if kind else None, label in fresh))
        return runs

    def probe(self, seed: int, t_index: int, p_index: int, reference, labels: list[str], fresh: set[str],
              again: bool = False) -> None:
        """One probe under one seed, for each of ``labels``: called, scored and named as grading would (named
        only in the first sweep, where every mutant of the task is called beside it); ``fresh``: those whose
        namespace is made anew first."""
        task, probe = self.task, self.task.probes[p_index]
        args = generate(probe, probe_rng(seed, t_index, p_index))
        expected = reference_outputs(reference, args)
        _write(self.folder / "inbox", call_files(task, probe, args, {}))
        runs = self._runs(probe, expected, labels, fresh)
        ran = self.runner.run(self.folder / "inbox", task.function, runs)
        observed = {label: _observe(outbox) for label, outbox, *_ in runs}
        verdicts = {}
        for label, obs in observed.items():
            stats: dict = {}
            if obs is None:
                ok, message = False, ran.get(label) or "no reply came back from the call"
            else:
                ok, message = comparators.check_probe(task, probe, args, expected, obs, stats)
            verdicts[label] = ok, message, stats.get("max_error"), stats.get("tolerance_used")
        seen, failing = {}, set()  # the declared mutants' calls, and those failing this probe (scored above once)
        for label, obs in observed.items():
            index = self.mistake_of[label]
            if obs is not None and index is not None:
                seen[index] = obs
                if not verdicts[label][0]:
                    failing.add(index)
        for label, obs in observed.items():
            ok, message, error, used = verdicts[label]
            named = None  # as grading names (functions.run_probe): a failed call that returned, CPU or meta
            if (not again and not ok and obs is not None and probe.device in ("cpu", "meta")
                    and label in self.own and task.mistakes):
                named = matching(task, probe, args, expected, obs, seen, failing)
            raised = obs is None or not obs.reply.ok
            self.lines[label][probe.name].add(seed, ok, message, error, named, raised, used, again)

    def near_its_tolerance(self) -> dict[str, set[str]]:
        """{label: the names of its lines whose verdict came within MARGIN of the tolerance}, those that have any."""
        near = {label: {name for name, v in lines.items() if v.near_its_tolerance} for label, lines in self.lines.items()}
        return {label: names for label, names in near.items() if names}


def _as_declared(source: str) -> str:
    """A mutant's source as the course reader declares it (its file's text, stripped): a mutant passed as its
    file's raw text is the declared one."""
    return source.strip()


def _swept_under(probe: Probe, nth: int, drawn_only: bool) -> bool:
    """Whether a line is called under the sweep's nth seed: a line whose inputs are the same under every seed
    (inputs.seed_free: c4's T = 5) under the first alone, since the implementations are deterministic (the
    harness resets torch's seed before each call, and none draws from NumPy's): its coverage is exact; a
    line with fixed sizes under the first ``fixed_seeds`` (``drawn_only`` past them); the others under all."""
    if seed_free(probe):
        return nth == 0
    return not (drawn_only and "dims" not in probe.options)


def sweep_task(python: str, helpers: str, t_index: int, task: FunctionUnit, mutants: list[tuple[str, str]],
               seeds: range, reference, with_stubs: bool = True, fixed_seeds: int | None = None,
               near_seeds: int | None = None, every_line: bool = False) -> dict:
    """{"lines": {label: {probe: LineVerdicts}}, "broken": {label: what its cell raised}} for one task; a line
    whose sizes are fixed (no "dims" drawn) is swept under the first ``fixed_seeds`` seeds only (default all):
    only its values change with the seed, and the check holds their errors to a margin of the tolerance.

    With ``near_seeds``, a second sweep: each implementation's lines whose sizes are drawn, and those whose values
    came within MARGIN of their tolerance (LineVerdicts.near_its_tolerance: a pass that used a tenth of it, a miss
    by less than ten times it), are called under further seeds until each has ``near_seeds`` (all of its lines,
    for a mutant that keeps state between calls); there only verdicts are recorded, since the task's other
    mutants are not called beside them to name against. With ``every_line`` too, the second sweep takes every line of
    every implementation (a seed-free line's one call is exact) to ``near_seeds``: no margin stands in for seeds."""
    says = {_as_declared(m.source): m.says for m in task.mistakes}
    stub_labels = [f"stub: {kind}" for kind in stubs.KINDS] if with_stubs else []
    implementations = {SOLUTION: "", **dict(mutants), **dict.fromkeys(stub_labels, "")}
    folder = in_memory_tempdir("attn-ref-sweep-")
    runner = SweepRunner(python, helpers, implementations, folder)
    try:
        swept = _TaskSweep(task, implementations, {label: says.get(_as_declared(source), "") for label, source in mutants},
                           stub_labels, runner, folder)
        # a mutant that keeps state between calls is called on every line under every seed, in the lines' order, as
        # grading calls it: a line's verdict depends on the calls before it (there no name is asked: the task's
        # other mutants are not called beside it)
        stateful = [label for label in swept.labels if KEEPS_STATE in implementations[label]]
        for seed in seeds:
            drawn_only = fixed_seeds is not None and seed >= seeds.start + fixed_seeds
            fresh = set(swept.labels)  # each seed a submission of its own: each namespace made anew at its first call
            for p_index, p in enumerate(task.probes):
                everyone = _swept_under(p, seed - seeds.start, drawn_only)
                labels = swept.labels if everyone else stateful
                if p.device != "cuda" and labels:
                    swept.probe(seed, t_index, p_index, reference, labels, fresh & set(labels), again=not everyone)
                    fresh -= set(labels)
        if near_seeds:
            _sweep_near_again(swept, t_index, reference, seeds.stop, near_seeds, set(stateful), every_line)
        return {"lines": {label: {name: v.to_json() for name, v in probes.items()} for label, probes in swept.lines.items()},
                "broken": runner.broken}
    finally:
        runner.close()
        shutil.rmtree(folder, ignore_errors=True)


def _sweep_near_again(swept: _TaskSweep, t_index: int, reference, first_seed: int, near_seeds: int, stateful: set[str],
                      every_line: bool = False) -> None:
    """The second sweep of sweep_task: seeds from ``first_seed`` on, until every line near its tolerance, and every
    line whose sizes are drawn, of every implementation (a rare size can flip a verdict whatever the values'
    margin: correct work failed, or a mistake that goes uncharged), has been called under ``near_seeds`` (a
    seed-free line never is: its one call is exact). A mutant that keeps state between calls is called on all of
    its lines (seed-free ones too: the calls before them differ) under every seed, in order, until each has
    ``near_seeds``, as grading would call it."""
    task = swept.task
    wanted = _wanted_again(swept, stateful, every_line)
    labels_in_order = [label for label in swept.labels if any(w[0] == label for w in wanted)]
    seed = first_seed
    while wanted:
        fresh = set(labels_in_order)  # each seed a submission of its own: each namespace made anew at its first call
        for p_index in range(len(task.probes)):
            labels = [label for label in labels_in_order if (label, p_index) in wanted]
            if labels:
                swept.probe(seed, t_index, p_index, reference, labels, fresh & set(labels), again=True)
                fresh -= set(labels)
        short = {(label, p_index) for label, p_index in wanted if swept.lines[label][task.probes[p_index].name].seeds < near_seeds}
        behind = {label for label, _ in short}  # a mutant that keeps state goes on with all of its lines, in order
        wanted = {(label, p_index) for label, p_index in wanted if (label, p_index) in short or (label in stateful and label in behind)}
        seed += 1


def _wanted_again(swept: _TaskSweep, stateful: set[str], every_line: bool = False) -> set[tuple[str, int]]:
    """The (label, probe index) pairs the second sweep calls: every implementation's lines whose sizes are drawn,
    each one's lines near their tolerance (with ``every_line``, all of its lines), and all the lines of a mutant that
    keeps state (seed-free ones too: the calls before them differ); never a CUDA line."""
    task = swept.task
    drawn = {p.name for p in task.probes if "dims" in p.options or every_line}
    near = swept.near_its_tolerance()
    if drawn:
        near = {label: near.get(label, set()) | drawn for label in swept.labels}
    return {(label, p_index) for label, names in near.items() for p_index, p in enumerate(task.probes)
            if p.device != "cuda" and (label in stateful or (p.name in names and not seed_free(p)))}


def sweep(autograder, mutants: dict[str, list[tuple[str, str]]], seeds: range, *, with_stubs: bool = True,
          tasks: set[str] | None = None, fixed_seeds: int | None = None, near_seeds: int | None = None,
          near_tasks: set[str] | None = None, every_line: bool = False) -> dict:
    """{task: sweep_task(...)} for every function unit of the autograder (or those named in ``tasks``), its
    mutants given as {task: [(label, source)]}; the second sweep (``near_seeds``) for every task, or those named in
    ``near_tasks``, of every line with ``every_line``. Trusted code only: the assignment's helpers, mutants and
    stubs, never a submission."""
    autograder, plan = prepare(autograder, None)
    found = {}
    for t_index, task in enumerate(autograder.checks.units):
        if not isinstance(task, FunctionUnit) or (tasks is not None and task.name not in tasks):
            continue
        found[task.name] = sweep_task(plan.python, autograder.checks.helpers, t_index, task,
                                      mutants.get(task.name, []), seeds, autograder.reference(task.reference), with_stubs,
                                      fixed_seeds, near_seeds if near_tasks is None or task.name in near_tasks else None,
                                      every_line)
    return found
