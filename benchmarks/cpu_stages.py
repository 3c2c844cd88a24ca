"""Where a batch's CPU goes: run `attn-ref grade` and sample every process of its tree (every 20 ms, with psutil),
charging each process's user + system time, as last seen, to the stage it belongs to.

Kernels forked from the kernel image are reaped by nobody who waits for them, so getrusage of the children
would miss them: sampling the tree is the only account of every process. A process that lives under 20 ms may
be missed; the total is checked against getrusage of the reaped children where both apply.

Stages (a process is classified when first seen, from its command line, its uid and its parent's stage):
- "kernel image": the image's own process (its imports: once per run, or once per worker);
- "kernels": processes of a kernel's uid (the notebook, the harness, the probes' calls), and those started
  afresh (the students' interpreter running a kernel outside the image);
- "mistakes runner": the assignment's mutants on failed probes' inputs (forked from the image as the grader's user);
- "launchers and sandboxes": `python -I launch.py`, bubblewrap and its waiting payload;
- "grading processes": the supervisor's forks, one per submission (jupyter_client, scoring, results);
- "supervisor while grading" and "supervisor after grading" (results, the gradebook, report.html with its
  similarity, and its fork that draws the plots): the `attn-ref grade` process itself, split at the moment the last
  grading process ended;
- "workers' graders" (worker_service.py, a cluster's per-worker supervisor) and "Dask" (scheduler, nannies,
  workers) for `--cluster`.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field

import psutil

PLOTS = "attn-ref plots"  # the process name of the gradebook's plots (gradebook.write_gradebook)
IMAGE_MARK = "The kernel image: a process of the students' environment"  # in the image's (and its forks') command line
STAGES = ("kernel image", "kernels", "mistakes runner", "launchers and sandboxes", "grading processes",
          "supervisor while grading", "supervisor after grading", "workers' graders", "Dask")


@dataclass
class Sampled:
    wall: float
    returncode: int
    stages: dict[str, float] = field(default_factory=dict)
    rusage_children: float = 0.0  # user + system of the reaped children (getrusage), for a cross-check

    @property
    def total(self) -> float:
        return sum(self.stages.values())


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _classify(p: psutil.Process, parent_stage: str, me: int) -> str:
    line = _cmdline(p)
    try:
        uid = p.uids().real
    except psutil.Error:
        uid = me
    if IMAGE_MARK in line:  # the image, or a fork of it: a kernel (its uid), or the mistakes runner (the grader's)
        if parent_stage in ("supervisor while grading", "workers' graders"):
            return "kernel image"
        return "kernels" if uid != me else "mistakes runner"
    if uid != me:
        return "kernels"
    if p.name() == PLOTS:  # the gradebook's plots, drawn beside report.html (classroom/beside.py)
        return "supervisor after grading"
    if "launch.py" in line or "bwrap" in line or "sleep infinity" in line:
        return "launchers and sandboxes"
    if "mistakes_runner" in line:
        return "mistakes runner"
    if "worker_service" in line:  # a worker's grader, or its fork for one submission
        return "grading processes" if parent_stage == "workers' graders" else "workers' graders"
    if parent_stage == "supervisor while grading":
        return "Dask" if "spawn_main" in line or "multiprocessing" in line else "grading processes"
    return parent_stage


def run_sampled(cmd: list[str], interval: float = 0.02, **popen) -> Sampled:
    """Run ``cmd`` and return its wall time and CPU seconds per stage."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    me = os.getuid()
    stage_of: dict[tuple[int, float], str] = {}
    cpu: dict[tuple[int, float], float] = {}
    grading_until = 0.0
    supervisor_at_last_grading = 0.0
    root = psutil.Process(proc.pid)
    root_key = (root.pid, root.create_time())
    stage_of[root_key] = "supervisor while grading"
    while proc.poll() is None:
        try:
            tree = root.children(recursive=True)
        except psutil.Error:
            tree = []
        grading = False
        for p in [root, *tree]:
            try:
                key = (p.pid, p.create_time())
                if key not in stage_of:
                    parent = p.parent()
                    parent_key = (parent.pid, parent.create_time()) if parent else None
                    stage_of[key] = _classify(p, stage_of.get(parent_key, "supervisor while grading"), me)
                times = p.cpu_times()
                cpu[key] = times.user + times.system
            except psutil.Error:
                continue
            if stage_of[key] in ("grading processes", "kernels"):
                grading = True
        if grading:
            grading_until = time.perf_counter()
            supervisor_at_last_grading = cpu.get(root_key, 0.0)
        time.sleep(interval)
    wall = time.perf_counter() - start
    after = os.times()
    stages: dict[str, float] = defaultdict(float)
    for key, seconds in cpu.items():
        stages[stage_of[key]] += seconds
    if grading_until:
        after_grading = cpu.get(root_key, 0.0) - supervisor_at_last_grading
        stages["supervisor after grading"] += after_grading
        stages["supervisor while grading"] -= after_grading
    children = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return Sampled(wall, proc.returncode, dict(stages), children)
