"""Every time limit and resource cap of grading, in one place: ``Limits``, the times of one grading (seconds),
passed whole to local and cluster runs (``Limits.to_flags``, the one place they become `attn-ref grade`
flags); ``KernelCaps``, what one kernel may use, carried by the sandbox plan; and the times of the run's own
helpers (probing the sandbox, starting the kernel image, the mutants' replies).

Size bounds of what the grader reads (a notebook's bytes, an export's members, a probe's array) are not
here: each format's bound lives beside the one reader that enforces it (submission.py, classroom/unpack.py,
checks_json.py)."""

from __future__ import annotations

from dataclasses import dataclass

BUDGET = 480.0  # everything for one submission: below Gradescope's default 10 minutes
MARGIN = 30.0  # past the budget, the supervisor ends a grading process that has not finished
NOTEBOOK_TIMEOUT = 180.0  # running the notebook's cells, all together
CELL_TIMEOUT = 120.0  # one notebook cell
CALL_TIMEOUT = 30.0  # one call of a student function
SETUP_TIMEOUT = 60.0  # grading mode and the harness, in a fresh kernel
KERNEL_START_TIMEOUT = 60.0
WORKER_MARGIN = 60.0  # past budget + margin, a Dask worker ends its grading process (the backstop's backstop)
MUTANTS_REPLY_TIMEOUT = 60.0  # one probe's mutants, in the mistakes runner (the first also imports torch)
SANDBOX_PROBE_TIMEOUT = 30.0  # each probe of what the machine allows (bubblewrap, the students' interpreter), once a run
IMAGE_READY_TIMEOUT = 120.0  # the kernel image's server, from start to ready (it imports torch once)

# the fields a command line sets, and their flags (cli.py's `attn-ref grade` arguments)
FLAGS = {"budget": "--timeout", "cell": "--cell-timeout", "call": "--call-timeout"}


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The time limits of one grading (seconds)."""

    cell: float = CELL_TIMEOUT
    call: float = CALL_TIMEOUT
    notebook: float = NOTEBOOK_TIMEOUT
    budget: float = BUDGET
    margin: float = MARGIN
    setup: float = SETUP_TIMEOUT
    kernel_start: float = KERNEL_START_TIMEOUT
    worker_margin: float = WORKER_MARGIN
    mutants_reply: float = MUTANTS_REPLY_TIMEOUT

    @classmethod
    def of(cls, budget: float | None = None, cell_timeout: float | None = None, call_timeout: float | None = None,
           notebook_timeout: float | None = None) -> Limits:
        """Limits from keyword seconds (grade()'s ``timeouts``); what is not given keeps its default."""
        given = {"budget": budget, "cell": cell_timeout, "call": call_timeout, "notebook": notebook_timeout}
        return cls(**{k: v for k, v in given.items() if v is not None})

    def to_flags(self) -> list[str]:
        """The command line of a grader that grades under these limits (a Dask worker's)."""
        return [arg for name, flag in FLAGS.items() for arg in (flag, repr(float(getattr(self, name))))]

    @property
    def backstop(self) -> float:
        """Seconds after which a whole grading process is ended from outside (a worker's subprocess)."""
        return self.budget + self.margin + self.worker_margin


@dataclass(frozen=True)
class KernelCaps:
    """A kernel's caps: memory, processes, files, disk, CPU time. The sandbox plan carries them (isolation/
    sandbox.py: rlimits, the cgroup, bubblewrap's /tmp; the watchdog polls the memory where no cgroup works)."""

    memory_bytes: int | None = 4 << 30  # address space per process (torch maps ~1.5 GB at import); None: no cap (CUDA)
    # resident memory of ALL the kernel's processes together (resources.py: a cgroup, or polled PSS); an
    # honest torch kernel holds ~300-400 MB, so this leaves room for big tensors but not for forks of hogs
    kernel_memory_bytes: int | None = 3 << 30
    nice: int = 10  # kernels run below the grader's CPU priority
    processes: int = 64
    file_size_bytes: int = 256 << 20
    cpu_seconds: int = 900
    disk_bytes: int = 1 << 30  # everything the kernel writes, all files together
    disk_files: int = 20000
    tmp_bytes: int = 256 << 20  # the private /tmp inside the namespaces (memory-backed)
