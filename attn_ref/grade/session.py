"""A graded run of one notebook: its kernel, the cells that run, and the calls the grader makes into it.

Each exchange with the kernel happens in a fresh folder with an unguessable name: ``in/`` holds what the
grader wrote (the kernel may only read it), ``out/`` is the kernel's, and what comes back is read from it
through safeio (no links, no FIFOs, no hard links, bounded) and validated by the protocol.
"""

from __future__ import annotations

import ast
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from . import withheld
from .checks_json import EXPORT_FUNCTION, EXPORT_MODULE
from .inkernel.errors import GraderError
from .inkernel.wire import MalformedReply, Status, parse_call_reply, parse_environment
from .isolation.kernel import Execution, Kernel
from .isolation.safeio import UnsafeReply, keep_reply, make_private_dir, read_kept, read_reply, write_new
from .isolation.sandbox import Jail
from .settings import KERNEL_START_TIMEOUT, SETUP_TIMEOUT

EXPLORATION_TAG = "exploration"
# Everything the kernel runs of ours after the notebook, in this order, in one namespace: the type rules, the
# text caps and the wire format the harness speaks (the kernel cannot import attn_ref), then the harness.
# Their imports of one another are marked "sent with the harness" and dropped.
KERNEL_MODULES = ("attn_ref.portable.typerules", "attn_ref.grade.inkernel.errors", "attn_ref.grade.inkernel.text", "attn_ref.grade.inkernel.wire", "attn_ref.grade.inkernel.harness")
SENT_WITH_HARNESS = "# sent with the harness"


def _source(module: str) -> str:
    package, name = module.rsplit(".", 1)
    return "\n".join(line for line in resources.files(package).joinpath(f"{name}.py").read_text().splitlines()
                     if not line.endswith(SENT_WITH_HARNESS))


HARNESS_SOURCE = "\n\n".join(_source(module) for module in KERNEL_MODULES)


def _grader_call(stmt: ast.stmt, methods: tuple[str, ...]) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)
            and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == "grader"
            and stmt.value.func.attr in methods)


def _export_import(stmt: ast.stmt) -> bool:
    """`from export_written import export`: the module the build ships beside the notebook (EXPORT_MODULE)."""
    return (isinstance(stmt, ast.ImportFrom) and stmt.module == EXPORT_MODULE and stmt.level == 0
            and [(a.name, a.asname) for a in stmt.names] == [(EXPORT_FUNCTION, None)])


def _export_call(stmt: ast.stmt) -> bool:
    """`export(grader, ...)`: the export cell's one call, whose first argument is otter's grader."""
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id == EXPORT_FUNCTION and bool(stmt.value.args)
            and isinstance(stmt.value.args[0], ast.Name) and stmt.value.args[0].id == "grader")


def is_otter_call(source: str) -> bool:
    """A cell with nothing to grade, skipped: only grader.check/check_all/export/to_pdf calls, or the export
    cell of a notebook with written parts (`from export_written import export` and `export(grader, ...)`:
    the module is not in the graded kernel's folder). Code a student adds to such a cell makes it run: it
    still counts, the otter stand-in's export does nothing, and a missing module is one cell error."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not body:
        return False
    if any(_export_import(stmt) for stmt in body):
        return all(_export_import(stmt) or _export_call(stmt) or _grader_call(stmt, ("export",)) for stmt in body)
    return all(_grader_call(stmt, ("check", "check_all", "export", "to_pdf")) for stmt in body)


def runnable_cells(nb) -> list[str]:
    """Code cells to run while grading: exploration cells and bare grader.check() cells are skipped."""
    return [
        cell.source
        for cell in nb.cells
        if cell.cell_type == "code"
        and EXPLORATION_TAG not in cell.tags
        and not is_otter_call(cell.source)
    ]


class BudgetExhausted(GraderError):
    """The overall time budget ran out."""


@dataclass(frozen=True)
class Exchange:
    """One call's folders: ``inbox`` written by the grader, ``outbox`` by the kernel."""

    inbox: Path
    outbox: Path


class _Replies:
    """How many of a batch's calls have replied, in order (the kernel writes reply.json last, by rename): the
    progress that restarts each call's time limit. The kernel's word, used for timing alone: marking a call done
    early only moves a limit from one call to the next, never past what the calls one by one would have."""

    def __init__(self, exchanges: list[Exchange], owner: int | None, kept: dict[Path, dict]):
        self.exchanges, self.owner, self.kept, self.done = exchanges, owner, kept, 0

    def __call__(self) -> int:
        while self.done < len(self.exchanges) and os.path.lexists(self.exchanges[self.done].outbox / "reply.json"):
            self.done += 1
        return self.done

    def keep(self) -> None:
        """The replies of the calls before the one that ended the kernel (a crash, a loop deaf to interrupts), kept
        in memory before the restart removes the calls' folders: read after it, as calls one by one are."""
        for exchange in self.exchanges[:self()]:
            if exchange.outbox in self.kept:
                continue
            kept = keep_reply(exchange.outbox, ["reply.json"], self.owner)
            try:  # and the arrays it names, no more: what a call's grading would read
                reply = parse_call_reply(read_kept(kept, "reply.json"))
                files = [o.file for o in (*reply.outputs, *(reply.inputs_after or ())) if o.file]
                kept |= keep_reply(exchange.outbox, files, self.owner)
            except (UnsafeReply, MalformedReply, OSError):
                pass  # an unreadable reply is kept as it was read: its grading says so
            self.kept[exchange.outbox] = kept


class NotebookSession:
    """Runs the notebook once in a confined kernel, then serves calls; re-runs it after a restart.

    A cell that kills the kernel is skipped on the re-run, so one ``os._exit`` costs only what it breaks.
    """

    def __init__(self, cells: list[str], notebook: tuple[str, bytes], jail: Jail, *, cell_timeout: float,
                 notebook_timeout: float, deadline: float, setup_timeout: float = SETUP_TIMEOUT,
                 kernel_start: float = KERNEL_START_TIMEOUT):
        self.cells, self.cell_timeout, self.notebook_timeout, self.deadline = cells, cell_timeout, notebook_timeout, deadline
        self.setup_timeout = setup_timeout
        self.jail = jail
        self.handle = f"_grader_{secrets.token_hex(6)}"  # the harness's name in the kernel, unguessable
        self.errors: list[str] = []
        self.deadly: set[int] = set()  # cells that killed the kernel
        self.restarts = 0
        self.timed_out = False  # some cell or call ran past its time
        self.kept: dict[Path, dict] = {}  # outbox -> its files, read before a restart removed it (Session.calls)
        # A hidden stand-in was sent: from then on, restarts included, no text of the kernel reaches results
        # (withheld.py). Set by the grader before the call that carries it.
        self.tainted = False
        self.kernel = Kernel(jail, *notebook, startup_timeout=kernel_start)
        self._prepare()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def _prepare(self) -> None:
        """Run the notebook (minus cells known to kill the kernel), then install the harness."""
        while True:
            generation = self.kernel.generation
            self.errors = []
            stop = time.monotonic() + min(self.notebook_timeout, max(self.remaining(), 0))
            for index, source in enumerate(self.cells):
                if index in self.deadly:
                    self.errors.append(f"code cell {index + 1}: skipped (it crashed the kernel)")
                    continue
                left = min(self.cell_timeout, stop - time.monotonic())
                if left <= 0:
                    self.errors.append(f"code cell {index + 1} and later: not run (the notebook ran out of time)")
                    self.timed_out = True
                    break
                ran = self.kernel.run(source, timeout=left)
                if ran.status is Status.ERROR and self.tainted:  # the error text is the kernel's
                    self.errors.append(withheld.cell_error(index, ran.error))
                elif ran.status is not Status.OK:
                    self.errors.append(f"code cell {index + 1}: {ran.error}")
                    self.timed_out |= ran.status is Status.TIMEOUT
                if ran.status is Status.DEAD or self.kernel.generation != generation:
                    self.deadly.add(index)
                    self.restarts += 1
                    if ran.status is Status.DEAD:
                        self.kernel.restart()
                    break
            else:
                break
            if self.remaining() <= 0:
                break
        install = f"{self.handle} = {{}}\nexec(compile({HARNESS_SOURCE!r}, '<grader>', 'exec'), {self.handle})"
        self.kernel.run(install, timeout=min(self.setup_timeout, max(self.remaining(), 1)))

    def exchange(self, label: str, files: dict[str, bytes] | None = None) -> Exchange:
        """A fresh pair of folders for one call; the name is unguessable, so nothing can be planted in it."""
        folder = make_private_dir(self.jail.exchange, f"{label}-{secrets.token_hex(8)}")
        inbox = make_private_dir(folder, "in")
        for name, data in (files or {}).items():
            write_new(inbox / name, data)
        return Exchange(inbox, self.jail.kernel_dir(folder, "out"))

    def clear_exchanges(self) -> None:
        """Remove every exchange so far (trusted runs that grade many times in one session: mutants, stubs),
        so their files do not add up to the sandbox's file limit. In this process (the code is trusted, its folders
        shallow): a subprocess per seed would cost the check seconds."""
        for folder in self.jail.exchange.iterdir():
            shutil.rmtree(folder, ignore_errors=True)

    def call(self, helper: str, *args: str, timeout: float) -> Execution:
        left = min(timeout, self.remaining())
        if left <= 1:
            raise BudgetExhausted()
        code = f"{self.handle}[{helper!r}](" + ", ".join(repr(a) for a in args) + ")"
        generation = self.kernel.generation
        return self._after(self.kernel.run(code, timeout=left), generation)

    def calls(self, function: str, exchanges: list[Exchange], timeout: float) -> tuple[int, Execution]:
        """The harness's ``call`` on each exchange, in order, in one request, each call held to its own ``timeout``
        from the reply before it (and all to the budget): (how many replied, in order, before the first that did not,
        the request's Execution). A request that stops early (a call past its time, a crash, an error of its own)
        stops at the first exchange without a reply; none after it ran."""
        if min(timeout, self.remaining()) <= 1:
            raise BudgetExhausted()
        code = f"{self.handle}['calls']({function!r}, {[[str(e.inbox), str(e.outbox)] for e in exchanges]!r})"
        replied = _Replies(exchanges, self.jail.owner, self.kept)
        generation = self.kernel.generation
        self.kernel.before_restart = replied.keep
        try:
            ran = self.kernel.run(code, timeout=timeout, progress=replied, until=self.deadline)
            done = replied()  # before a restart, which removes the calls' folders
            return done, self._after(ran, generation)
        finally:
            self.kernel.before_restart = None

    def _after(self, ran: Execution, generation: int) -> Execution:
        """A request's end: a dead kernel restarted, and a fresh kernel given the notebook again."""
        self.timed_out |= ran.status is Status.TIMEOUT
        if ran.status is Status.DEAD:
            self.kernel.restart()
        if self.kernel.generation != generation:
            self.restarts += 1
            self._prepare()  # a fresh kernel: run the notebook again for the calls still to come
        return ran

    def reply(self, exchange: Exchange) -> bytes:
        """The kernel's reply file of one exchange (UnsafeReply, FileNotFoundError if there is none)."""
        if exchange.outbox in self.kept:
            return read_kept(self.kept[exchange.outbox], "reply.json")
        return read_reply(exchange.outbox, "reply.json", owner=self.jail.owner)

    def request(self, helper: str, parse, *args, timeout: float, label: str):
        """Call a harness helper that writes one JSON reply; (parsed reply or None, Execution)."""
        exchange = self.exchange(label)
        ran = self.call(helper, *args, str(exchange.outbox), timeout=timeout)
        if ran.status is not Status.OK:
            return None, ran
        try:
            return parse(self.reply(exchange)), ran
        except FileNotFoundError:
            return None, Execution(Status.MALFORMED, "no reply came back")
        except (UnsafeReply, MalformedReply, OSError) as err:
            return None, Execution(Status.MALFORMED, str(err))

    def environment(self, timeout: float) -> dict:
        env, _ = self.request("environment", parse_environment, timeout=timeout, label="environment")
        return env or {}

    def shutdown(self) -> None:
        self.kernel.shutdown()
