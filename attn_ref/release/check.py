"""attn-ref check: a release proves itself before anyone uploads it.

For each autograder zip, through the zip's own bundled grader (a separate process, the zip's files first
on its path) and the students' environment:

* the solution scores full and the blank notebook 0 (and, as root, the zip's run_autograder agrees);
* the solution agrees with every answer key (a questions assignment: every answer of the solution passes);
* every public check passes on the executed solution, and none on the blank starter (a task's body `...`);
* every hidden probe is failed by at least one mutant declared with its task (mutants share one kernel);
* every task has a probe that is evidence (no placeholder passes it) under every sampled seed, so correct
  work can earn every line;
* grading the solution twice gives the same scores;
* no line's verdict on the solution, a mutant or a stub changes with the seed, every line under 1,500 seeds
  (kept in the course's record, sweep_record.py), and the assignment's share of its mutants is named.

The builder runs it on its staging folder before moving a release into place (`make release`).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..grade.checks_json import read_checks
from ..grade.proofs import MARGIN
from ..grade.proofs import SEEDS_FOR_ONE_IN_500 as NEAR_SEEDS
from ..grade.proofs.stubs import KINDS as STUB_KINDS
from ..grade.proofs.sweep import SOLUTION
from ..grade.scoring.whose_variant import IDENTITY_VARIABLE
from . import processes, sweep_record
from .course import load_assignment, load_registry
from .hidden_checks import blank_starter
from .locks import LockError
from .units import Question, Task
from .versions import write_report

TIMEOUT = 900
SWEEP_CHECK = "every line's verdict holds under every seed swept; every mutant is named"
# Every line of every implementation under NEAR_SEEDS seeds, a seed-free line once (its call is exact): 1,500 sees a
# verdict flipping under one seed in 500 with 95 % confidence (1 − (1 − 1/500)^1500 ≈ 0.95). That sweep is kept in
# the course's record (sweep_record.py), keyed per task by all its verdicts depend on, and made again for a task
# whose key changed; every check also makes the first sweep, where mistakes are named: lines with drawn sizes under
# SWEEP_SEEDS seeds, the others (only their values drawn) under FIXED_SEEDS, and holds its verdicts to the record's.
# `attn-ref check --sweep-seeds N` sweeps every line under N seeds instead, with no record.
SWEEP_SEEDS = 100
FIXED_SEEDS = 20
RECORD_PASSES = {"first": SWEEP_SEEDS, "fixed": FIXED_SEEDS, "whole": NEAR_SEEDS}  # in the record's keys
SWEEP_PROCESSES = 2  # the sweep's tasks are shared out over this many processes (each with its runner)


@dataclass(frozen=True)
class Row:
    assignment: str
    check: str
    ok: bool
    detail: str = ""


class BundledGrader:
    """The zip's grader, run as `python -m attn_ref` with the zip's files first on the path."""

    def __init__(self, zip_path: Path, work: Path):
        self.zip, self.source = zip_path, work / "source"
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(self.source)
        self.env = dict(os.environ, PYTHONPATH=str(self.source))
        student = Path(__file__).resolve().parents[2] / ".venv-student"  # make's students' environment, as a user
        if os.geteuid() != 0 and (student / "bin" / "python").exists() and "ATTN_REF_STUDENT_ENV" not in os.environ:
            self.env["ATTN_REF_STUDENT_ENV"] = str(student)
        self.work = work

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return processes.run([sys.executable, "-m", "attn_ref", *args], env=self.env, cwd=self.work,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)

    def grade(self, notebook: Path, label: str, submitters: list[dict] | None = None) -> dict:
        results = self.work / f"{label}.json"
        extra = []
        if submitters is not None:  # as Gradescope lists them in submission_metadata.json
            (self.work / f"{label}-metadata.json").write_text(json.dumps({"users": submitters}))
            extra = ["--submitters", str(self.work / f"{label}-metadata.json")]
        done = self.run("grade", str(notebook), "--autograder", str(self.zip), "--results", str(results), *extra)
        if done.returncode != 0 or not results.exists():
            raise RuntimeError(f"the bundled grader failed on {notebook.name}: {done.stderr[-800:]}")
        return json.loads(results.read_text())


def _scores(results: dict) -> dict[str, tuple[float, float]]:
    return {t["name"].split(":")[0]: (t["score"], t["max_score"]) for t in results["tests"]}


def _short(results: dict) -> str:
    lost = [f"{name} {got:g}/{full:g}" for name, (got, full) in _scores(results).items() if got < full]
    return ", ".join(lost[:6]) or results.get("output", "")[:200]


def _solution_row(name: str, results: dict, assignment) -> Row:
    """The solution, graded in the students' environment: full marks, and no cell raising there. A cell that
    raises only there (setup.py importing a package the students' lock lacks) still left the solution's
    functions defined and full marks, and every student a broken first cell."""
    lost = []
    for test in results["tests"]:
        if test["score"] < test["max_score"]:
            unit = next((u for u in assignment.units if u.name == test["name"].split(":")[0]), None)
            where = assignment.folder / unit.name / ("task.py" if isinstance(unit, Task) else "question.py") if unit else test["name"]
            failed = [line[2:] for line in test["output"].splitlines() if line.startswith("✗")]
            lost.append(f"{where}: the solution scores {test['score']:g}/{test['max_score']:g}"
                        + (f", failing {failed[0][:300]}" if failed else ""))
    errors = results["extra_data"].get("cell_errors", [])
    if errors:
        lost.append(f"a cell of the solution raised in the students' environment (locks/student.txt): {errors[0][:300]} "
                    f"(setup.py and every solution.py may import only the students' packages)")
    if results["extra_data"]["status"] != "ok":
        lost.append(f"status {results['extra_data']['status']}")
    return Row(name, "the solution scores full (bundled grader)", not lost, "; ".join(lost))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def public_checks(solution: Path, assignment) -> list[str]:
    """Units whose `grader.check` output in the executed solution is not a pass: the file, and what failed."""
    nb = nbformat.read(str(solution), as_version=4)
    failing = []
    for unit in assignment.units:
        outputs = [o for c in nb.cells if c.cell_type == "code" and f'grader.check("{unit.name}")' in c.source
                   for o in c.get("outputs", [])]
        if "All test cases passed" not in json.dumps(outputs):
            said = " ".join(_ANSI.sub("", str(o.get("data", {}).get("text/plain", o.get("text", "")))) for o in outputs)
            said = " ".join(said.split())
            if isinstance(unit, Task):
                tests = _failed_tests(unit, said)
                where = f"{assignment.folder / unit.name / 'public_checks.py'}{': ' + ', '.join(tests) if tests else ''}"
            else:
                where = f"{assignment.folder / unit.name / 'question.py'} (its answers' kinds and ranges)"
            failing.append(f"{where} fails on the solution: {said[:400] or 'no output (did the check cell run?)'}")
    return failing


def passing_on_blank(assignment) -> list[str]:
    """Public checks that pass on the blank notebook (setup.py, then every task's function as students get
    it, its body `...`), each called as otter calls it: a check that passes before the student writes a line
    checks nothing, and tells them "All test cases passed". Run here, as `_solution_values` runs the solution:
    the instructor's own code."""
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for source in [assignment.setup, *(blank_starter(task) for task in assignment.tasks)]:
            exec(compile(source, "<blank>", "exec"), namespace)  # noqa: S102 - the instructor's setup and signatures
        passing = []
        for task in assignment.tasks:
            for test in task.public_checks:
                scope: dict = {}
                exec(compile(test, "<public check>", "exec"), scope)  # noqa: S102 - the instructor's public check
                function = next(value for key, value in scope.items() if key.startswith("test_") and callable(value))
                parameters = inspect.signature(function).parameters
                try:
                    function(**{p: namespace if p == "env" else namespace.get(p) for p in parameters})
                except Exception:  # noqa: BLE001, S112 - failing on the blank is what a public check should do
                    continue
                passing.append(f"{assignment.folder / task.name / 'public_checks.py'}: {function.__name__} passes on the "
                               f"blank starter ({task.function} returning None): make it call {task.function} and check "
                               "what it returns")
    return passing


def _failed_tests(task: Task, said: str) -> list[str]:
    """The test_ functions of public_checks.py whose assertion otter's output quotes."""
    named = []
    for test in task.public_checks:
        name = re.match(r"def (\w+)", test)
        lines = [line.strip() for line in test.splitlines()[1:] if len(line.strip()) > 8]
        if name and any(line in said for line in lines):
            named.append(name.group(1))
    return named


def _solution_values(assignment) -> dict:
    """The answer variables as the solution's cells leave them (setup, then every unit's solution, in order),
    run here: the instructor's own code, for the instructor's eyes. Best effort: what ran before an error."""
    namespace: dict = {}
    sources = [assignment.setup] + [u.solution if isinstance(u, Question) else u.starter for u in assignment.units]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for source in sources:
                exec(compile(source, "<solution>", "exec"), namespace)  # noqa: S102 - the instructor's solution
    except Exception:  # noqa: BLE001 - the grader's verdict stands; the value is only a hint
        pass
    return namespace


def _key_disagreements(results: dict, assignment) -> list[str]:
    """Answers of the solution the grader marked wrong: the solution's file and value, the grader's words, the key."""
    answers = {a.name: (q, a) for q in assignment.questions for a in q.answers}
    questions = {q.name for q in assignment.questions}
    found = []
    values = None
    for test in (t for t in results["tests"] if t["name"].split(":")[0] in questions):
        for line in (line for line in test["output"].splitlines() if line.startswith("✗")):
            name, _, rest = line[2:].partition(" (")
            reason = rest.partition("): ")[2] or rest
            question, answer = answers.get(name, (None, None))
            if question is None:
                found.append(line[2:])
                continue
            values = _solution_values(assignment) if values is None else values
            value = f" = {values[name]!r}" if name in values else ""
            found.append(f"{assignment.folder / question.name / 'solution.py'}: {name}{value} ({reason}); the key "
                         f"{question.name}/question.py computes is {answer.expected!r}: fix whichever is wrong")
    return found


def _run_autograder(zip_path: Path, solution: Path, work: Path) -> dict:
    """As root: the zip's run_autograder in a simulated /autograder, with this environment as setup.sh's."""
    root = work / "gradescope" / "autograder"
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    shutil.copy(solution, root / "submission" / solution.name)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, PYTHONPATH="")
    processes.run(["bash", str(root / "source" / "run_autograder")], env=env, stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE, timeout=TIMEOUT)
    return json.loads((root / "results" / "results.json").read_text())


def check_zip(zip_path: Path, release: Path, course: Path, sweep_seeds: int | None = None) -> list[Row]:
    with zipfile.ZipFile(zip_path) as archive:
        checks = read_checks(json.loads(archive.read("checks.json")))  # the format alone: the zip's grader has its registries
    name = checks.assignment
    entry = next((e for e in load_registry(course) if e.name == name), None)
    if entry is None:
        return [Row(name, "in the course registry", False, f"{course / 'registry.py'} has no assignment {name!r}")]
    assignment = load_assignment(course, entry)
    solution = release / "solutions" / name / f"{name}.ipynb"
    blank = release / "assignments" / name / f"{name}.ipynb"
    rows = []
    with tempfile.TemporaryDirectory(prefix=f"attn-ref-check-{name}-") as work:
        work = Path(work)
        grader = BundledGrader(zip_path, work)
        first = grader.grade(solution, "solution")
        rows.append(_solution_row(name, first, assignment))
        rows.append(_versions_row(name, first, release))
        if assignment.questions:
            wrong = _key_disagreements(first, assignment)
            rows.append(Row(name, "the solution agrees with every answer key", not wrong, "; ".join(wrong)))
        if any(q.parameters for q in assignment.questions):
            rows.append(_variants_row(name, assignment, grader, solution, work))
        blank_results = grader.grade(blank, "blank")
        scored = [f"{unit} {got:g}/{full:g}" for unit, (got, full) in _scores(blank_results).items() if got > 0]
        rows.append(Row(name, "the blank notebook scores 0", blank_results["score"] == 0, ", ".join(scored)))
        again = grader.grade(solution, "again")
        same = _scores(again) == _scores(first)
        rows.append(Row(name, "grading twice gives the same scores", same, "" if same else f"{_scores(first)} then {_scores(again)}"))
        failing = public_checks(solution, assignment)
        rows.append(Row(name, "every public check passes on the solution", not failing, "; ".join(failing)))
        if os.geteuid() == 0:
            results = _run_autograder(zip_path, solution, work)
            ok = results["score"] == first["score"]
            rows.append(Row(name, "run_autograder (as root) agrees", ok, "" if ok else results.get("output", "")[:200]))
        if assignment.tasks:
            vacuous = passing_on_blank(assignment)
            rows.append(Row(name, "no public check passes on the blank starter", not vacuous, "; ".join(vacuous)))
            rows.append(mutant_row(name, assignment, grader, solution, work))
            rows.append(evidence_row(name, assignment, grader))
            graded = work / "verdicts.json"  # mutant_row's: each mutant and stub graded in a kernel, as grading does
            rows.append(sweep_row(name, assignment, grader, work, sweep_seeds,
                                  json.loads(graded.read_text()) if graded.exists() else None))
            rows.append(solution_seeds_row(name, grader, solution, work))
    return rows


def _versions_row(name: str, results: dict, release: Path) -> Row:
    """autograder/<name>-versions.txt, and whether the kernels that graded ran the lock's versions."""
    check = f"the kernels ran the lock's versions (autograder/{name}-versions.txt)"
    python = results.get("extra_data", {}).get("sandbox", {}).get("python")
    if not python:
        return Row(name, check, False, "the grader did not say which interpreter its kernels ran")
    try:
        problems = write_report(release / "autograder", name, python)
    except (RuntimeError, LockError) as err:
        return Row(name, check, False, str(err))
    return Row(name, check, not problems, "; ".join(problems) + (": run `make student-env`" if problems else ""))


VARIANTS_CHECK = "variants: each identity's numbers score full, another's lose points; keys in range and distinct"
SAMPLE_IDENTITIES = ("ana.lima@example.edu", "4021337")  # an email and an SID


def _variant_problems(assignment) -> list[str]:
    """Every variant's answers within the question's declared ranges, and different parameters giving
    different answers (else the variant gives nothing away but nothing of one's own either)."""
    found = []
    for q in (q for q in assignment.questions if q.parameters):
        seen: dict = {}
        for values in q.variants():
            answers = q.answers_for(values)
            for a in answers:
                if (a.low is not None and a.expected < a.low) or (a.high is not None and a.expected > a.high):
                    found.append(f"{q.name}, {values}: {a.name} = {a.expected!r} is outside its range [{a.low}, {a.high}]")
            key = tuple(repr(a.expected) for a in answers)
            if key in seen:
                found.append(f"{q.name}: {seen[key]} and {values} give the same answers")
            seen[key] = values
    return found


def _with_identity(solution: Path, identity: str, out: Path) -> Path:
    nb = nbformat.read(str(solution), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and re.search(rf"^{IDENTITY_VARIABLE} = ", cell.source, flags=re.M):
            cell.source = re.sub(rf'^{IDENTITY_VARIABLE} = .*$', f"{IDENTITY_VARIABLE} = {identity!r}", cell.source, count=1, flags=re.M)
    nbformat.write(nb, str(out))
    return out


def _variants_row(name: str, assignment, grader: BundledGrader, solution: Path, work: Path) -> Row:
    """The solution run as sample students: with its own identity and submitters it scores full; submitted
    by another student (whose numbers differ), it loses points."""
    problems = _variant_problems(assignment)
    key = assignment.layout.variant_key
    varied = [q for q in assignment.questions if q.parameters]
    for i, identity in enumerate(SAMPLE_IDENTITIES):
        other = SAMPLE_IDENTITIES[(i + 1) % len(SAMPLE_IDENTITIES)]
        notebook = _with_identity(solution, identity, work / f"as-{i}.ipynb")
        own = grader.grade(notebook, f"variant-{i}", [{"email": identity, "sid": identity, "name": "sample"}])
        if _scores(own) != {k: (m, m) for k, (_, m) in _scores(own).items()}:
            problems.append(f"the solution as {identity} does not score full: {_short(own)}")
        differs = any(q.numbers_of(key, identity) != q.numbers_of(key, other) for q in varied)
        if differs:
            theirs = grader.grade(notebook, f"variant-{i}-other", [{"email": other, "sid": other, "name": "sample"}])
            if theirs["score"] >= own["score"]:
                problems.append(f"{identity}'s answers submitted by {other} lose no points")
    return Row(name, VARIANTS_CHECK, not problems, "; ".join(problems[:5]))


def mutant_sources(assignment) -> dict[str, list[tuple[str, str]]]:
    """{task: [(label, source)]} of the assignment's mutants, as the probe verbs and the sweep's record take them."""
    return {t.name: [(m.label, m.source) for m in t.mutants] for t in assignment.tasks}


def mutant_row(name: str, assignment, grader: BundledGrader, solution: Path, work: Path) -> Row:
    mutants = mutant_sources(assignment)
    (work / "mutants.json").write_text(json.dumps(mutants))
    done = grader.run("probe-mutants", str(solution), "--autograder", str(grader.zip), "--mutants",
                      str(work / "mutants.json"), "--out", str(work / "verdicts.json"), "--stubs",
                      "--seeds", str(MUTANT_SEEDS))
    if done.returncode != 0:
        return Row(name, MUTANT_CHECK, False, done.stderr[-400:])
    verdicts = json.loads((work / "verdicts.json").read_text())
    problems = [*_unrunnable(assignment, verdicts.get("errors", {})), *_toothless(assignment, verdicts),
                *_uncaught(assignment, verdicts), *scoring_stubs(assignment, verdicts)]
    count = sum(len(m) for m in mutants.values())
    stub_count = sum(len(kinds) for kinds in verdicts["stubs"].values())
    named = sum(bool(v["recognised"]) for labels in verdicts["mutants"].values() for v in labels.values())
    return Row(name, MUTANT_CHECK, not problems, "; ".join(problems) or f"{count} mutants ({named} named by their "
               f"outputs), {stub_count} derived stubs")


MUTANT_CHECK = "every hidden probe fails a mutant; no stub scores"
MUTANT_SEEDS = 1  # each mutant and stub is graded under this many seeds: its verdicts hold for any inputs


def scoring_stubs(assignment, verdicts: dict) -> list[str]:
    """Every stub, derived (zeros, ones, its first argument echoed) or a mutant marked "# stub", scores 0:
    code that does none of the task earns nothing. Else the build stops, naming the lines that paid it."""
    problems = []
    for task in assignment.tasks:
        where = assignment.folder / task.name / "task.py"
        for kind, verdict in verdicts["stubs"].get(task.name, {}).items():
            if verdict["score"] > 0:
                problems.append(f"{where}: a stub returning {STUB_KINDS[kind]} scores {verdict['score']:g}/"
                                f"{verdict['max_score']:g} on {task.name}, from: {'; '.join(verdict['credited'])} "
                                f"(add a general case a stub fails: random inputs, several keys or tokens)")
        for mutant in (m for m in task.mutants if m.stub):
            verdict = verdicts["mutants"].get(task.name, {}).get(mutant.label)
            if verdict and verdict["score"] > 0:
                problems.append(f"{mutant.path}: this stub scores {verdict['score']:g}/{verdict['max_score']:g} on "
                                f"{task.name}, from: {'; '.join(verdict['credited'])} (add a probe it fails that "
                                f"a correct function passes)")
    return problems


def _unrunnable(assignment, errors: dict) -> list[str]:
    """A mutant whose cell raised defines nothing: it is not graded, and the check says why."""
    return [f"{mutant.path}: its cell raised {errors[task.name][mutant.label]}: a mutant must run and define "
            f"`{task.function}`" for task in assignment.tasks for mutant in task.mutants
            if mutant.label in errors.get(task.name, {})]


def _toothless(assignment, verdicts: dict) -> list[str]:
    """Each mutant fails some probe under every seed, and the probe its "# must fail:" names: else it proves
    nothing (or only on some inputs)."""
    problems = []
    for task in assignment.tasks:
        for mutant in task.mutants:
            verdict = verdicts["mutants"].get(task.name, {}).get(mutant.label)
            if not verdict:
                continue
            seeds, passed = verdict["seeds"], verdict["passed"]
            named = [count for probe, count in passed.items() if mutant.must_fail and mutant.must_fail in probe]
            if verdict["clean_seeds"]:
                problems.append(f"{mutant.path}: passes every hidden probe of {task.name} under {verdict['clean_seeds']} "
                                f"of {seeds} seeds (is it correct, or is its bug one no probe looks for?): make it "
                                f"wrong, or add a probe that catches it")
            elif named and all(count for count in named):
                problems.append(f"{mutant.path}: passes '{mutant.must_fail}' (under {min(named)} of {seeds} seeds at "
                                f"least), which its '# must fail:' line says it fails: fix the mutant or the line")
    return problems


def _uncaught(assignment, verdicts: dict) -> list[str]:
    """Each hidden probe is failed by some mutant of its task: else nothing shows the probe can fail."""
    uncaught = [f"{task.name}: {probe.name}" for task in assignment.tasks for probe in task.probes
                if not any(v["passed"].get(probe.name, v["seeds"]) < v["seeds"]
                           for v in verdicts["mutants"].get(task.name, {}).values())]
    return [f"no mutant fails: {'; '.join(uncaught)} (add a mutant under the task's mutants/ that this probe catches)"] if uncaught else []


def _shares(assignment, processes: int, whole: set[str]) -> list[list[str]]:
    """The tasks in ``processes`` groups of about equal cost (lines × implementations × seeds: NEAR_SEEDS for the
    tasks swept ``whole``, SWEEP_SEEDS for the others)."""
    def cost(task) -> int:
        return len(task.probes) * (len(task.mutants) + len(STUB_KINDS) + 1) * (NEAR_SEEDS if task.name in whole else SWEEP_SEEDS)

    groups: list[tuple[int, list[str]]] = [(0, []) for _ in range(processes)]
    for task in sorted(assignment.tasks, key=lambda t: -cost(t)):
        total, names = min(groups, key=lambda g: g[0])
        groups.remove((total, names))
        groups.append((total + cost(task), [*names, task.name]))
    return [names for _, names in groups if names]


def _swept(grader: BundledGrader, assignment, work: Path, seeds: int, fixed: int, whole: set[str] | None = None) -> dict:
    """{task: its sweep} from the zip's grader, the tasks shared out over SWEEP_PROCESSES processes. ``whole``: the
    tasks whose every line is then taken to NEAR_SEEDS (the others get the first sweep alone); None (--sweep-seeds):
    every task's lines with drawn sizes and near their tolerance, when seeds are fewer than NEAR_SEEDS."""
    mutants = work / "sweep-mutants.json"
    mutants.write_text(json.dumps(mutant_sources(assignment)))
    running = []
    for i, tasks in enumerate(_shares(assignment, SWEEP_PROCESSES, whole or set())):
        out = work / f"sweep-{i}.json"
        command = [sys.executable, "-m", "attn_ref", "probe-sweep", "--autograder", str(grader.zip), "--mutants",
                   str(mutants), "--out", str(out), "--seeds", str(seeds), "--fixed-seeds", str(fixed), "--tasks", ",".join(tasks)]
        again = sorted(set(tasks) & whole) if whole is not None else []
        if again:
            command += ["--near-seeds", str(NEAR_SEEDS), "--every-line", "--near-tasks", ",".join(again)]
        elif whole is None and min(seeds, fixed) < NEAR_SEEDS:
            command += ["--near-seeds", str(NEAR_SEEDS)]
        running.append((out, len(again), processes.start(command, env=grader.env, cwd=work, stdout=subprocess.DEVNULL,
                                                         stderr=subprocess.PIPE, text=True)))
    found, errors = {}, []
    try:
        for out, again, process in running:
            _, stderr = process.communicate(timeout=TIMEOUT * (1 + 2 * again))  # a whole task: up to minutes each
            if process.returncode != 0 or not out.exists():
                errors.append(stderr[-400:])
            else:
                found.update(json.loads(out.read_text()))
    except BaseException:  # a timeout, Ctrl-C or SIGTERM: no sweep runs on without its check
        for _, _, process in running:
            processes.end(process)
        raise
    if errors:
        raise RuntimeError("the seed sweep failed: " + " | ".join(errors))
    return found


def _with_record(grader: BundledGrader, assignment, work: Path) -> tuple[dict, list[str], str]:
    """({task: its sweep, every line under NEAR_SEEDS}, problems, what was swept whole): the tasks the course's
    record holds (sweep_record.py) from it, once this check's first sweep agrees with it; the others swept whole,
    and the record written again where that changed it."""
    mutants = mutant_sources(assignment)
    keys = sweep_record.task_keys(grader.zip, mutants, RECORD_PASSES)
    file = sweep_record.path(assignment.folder)
    recorded = {task: entry for task, entry in sweep_record.read(file).items() if keys.get(task) == entry[0]}
    whole = {task for task in keys if task not in recorded}
    swept = _swept(grader, assignment, work, SWEEP_SEEDS, FIXED_SEEDS, whole)
    problems = [problem for task, (_, entry) in recorded.items() if task in swept
                for problem in sweep_record.disagreements(task, swept[task], entry)]
    entries = {**recorded, **{task: (keys[task], swept[task]) for task in whole if task in swept}}
    sweep_record.write(file, NEAR_SEEDS, entries)
    if problems:
        problems = [f"{file} does not hold on this machine (delete it to sweep again): " + "; ".join(problems[:4])]
    else:
        swept.update({task: entry for task, (_, entry) in recorded.items()})
    done = f"{len(whole)} of {len(keys)} tasks swept whole, the others held by {file.name}"
    return swept, problems, done


def _who(label: str) -> str:
    return "the solution" if label == SOLUTION else label if label.startswith("stub: ") else f"the mutant '{label}'"


def _sizes_may_coincide(task, line: str) -> str:
    """A pointer for a flipping line whose drawn sizes may coincide (drawn(..., distinct=...) leaves some free): code
    that reads one size for another passes exactly where the draw makes them equal."""
    probe = next((p for p in task.probes if p.name == line), None)
    dims = set(probe.options.get("dims", {})) if probe is not None else set()
    apart = {name for group in (probe.options.get("distinct", []) if probe is not None else []) for name in group}
    if len(dims) < 2 or dims <= apart:
        return ""
    free = ", ".join(sorted(dims - apart))
    return (f"; its drawn sizes {free} may coincide (drawn's `distinct=`), and code that reads one size for another "
            "passes where they do: keep them apart (drawn's default) or name them in a group of `distinct=`")


def _held_by_its_margin(label: str, v: dict) -> bool:
    """Whether a line's passing verdict needs the margin: the solution's always (correct code that adds in another
    order must pass too), a mutant's or a stub's unless 1,500 seeds saw it pass (a flip under one seed in 500 would
    have shown there with 95 % confidence)."""
    return label == SOLUTION or v["seeds"] < NEAR_SEEDS


def flipped_lines(assignment, swept: dict) -> list[str]:
    """A line whose verdict changes with the seed, or a value line passed within MARGIN of its tolerance (by the
    solution, or under fewer seeds than NEAR_SEEDS)."""
    problems = []
    for task in assignment.tasks:
        where = assignment.folder / task.name / "task.py"
        for label, lines in swept.get(task.name, {}).get("lines", {}).items():
            for line, v in lines.items():
                if v["passed"] and v["failed"]:
                    problems.append(f"{where}: '{line}' changes its verdict with the seed for {_who(label)}: passed "
                                    f"under {v['passed']} seeds (seed {v['pass_seed']}), failed under {v['failed']} "
                                    f"(seed {v['fail_seed']}: {v['fail_message'][:160]}){_sizes_may_coincide(task, line)}")
                elif v["passed"] and v["rtol"] and v["worst_error"] > v["rtol"] / MARGIN and _held_by_its_margin(label, v):
                    problems.append(f"{where}: '{line}' is passed by {_who(label)} with an error of "
                                    f"{v['worst_error']:.1e}, within {MARGIN}× of its tolerance {v['rtol']:g}: "
                                    f"another seed can tip it (allow more on that line, or give it other inputs)")
    return problems


def named_share(assignment, swept: dict) -> tuple[list, list[str], list[str], int]:
    """(the mutants that count, those never named in their own words on a line they fail under every seed it
    fails there, those that fail only by raising, how many failed lines were named as another mutant). Stubs
    do nothing and a mutant that only raises is told its error, explained (comparators.explained): an error
    names no mistake, many share one (a shape mismatch, a tensor on the CPU); neither counts."""
    counted, unnamed, raising, misnamed = [], [], [], 0
    for task in assignment.tasks:
        for mutant in (m for m in task.mutants if not m.stub):
            lines = swept.get(task.name, {}).get("lines", {}).get(mutant.label)
            if lines is None:
                continue
            misnamed += sum(sum(v["misnamed"].values()) for v in lines.values())
            failed = [v for v in lines.values() if v["failed"]]
            if failed and all(v["raised"] == v["failed"] for v in failed):  # (one that fails no line never raised)
                raising.append(str(mutant.path))
                continue
            counted.append(mutant)
            if not any(_named_wherever_asked(v) for v in lines.values()):
                unnamed.append(mutant)
    return counted, [str(m.path) for m in unnamed], raising, misnamed


def graded_otherwise(assignment, verdicts: dict, swept: dict) -> list[str]:
    """Lines where grading's own path and the sweep's runner give a mutant or a stub different verdicts: probe-mutants
    grades each in a notebook kernel as a submission is graded (mutant_row, under seed 0), the sweep calls it through
    the same harness without the kernel, under seed 0 among others. A line whose verdict holds under every seed
    swept must have it in grading too, or the sweep proves nothing of grading."""
    found = []
    for task in assignment.tasks:
        lines = swept.get(task.name, {}).get("lines", {})
        graded = {**verdicts.get("mutants", {}).get(task.name, {}),
                  **{f"stub: {kind}": v for kind, v in verdicts.get("stubs", {}).get(task.name, {}).items()}}
        for label, verdict in graded.items():
            for line, passed in verdict["passed"].items():
                v = lines.get(label, {}).get(line)
                if v is None or (v["passed"] and v["failed"]):  # a CUDA line (never swept), or a flip (told apart)
                    continue
                if bool(passed) != bool(v["passed"]):
                    found.append(f"{task.name}: '{line}' of {_who(label)}: {'passed' if passed else 'failed'} in grading "
                                 f"(seed 0), {'passed' if v['passed'] else 'failed'} under every seed swept")
    return found


def _named_wherever_asked(v: dict) -> bool:
    """A line a mutant failed in the first sweep, named in its own words under every seed it failed there (the
    second sweep, of lines near their tolerance, records verdicts only)."""
    asked = v["failed"] - v.get("failed_again", 0)
    return asked > 0 and v["named"] == asked


def sweep_row(name: str, assignment, grader: BundledGrader, work: Path, seeds: int | None = None,
              graded: dict | None = None) -> Row:
    """The seed sweep (grade/proofs/sweep.py): no line's verdict on the solution, a mutant or a stub changes
    with the seed, each is the verdict grading gives (``graded``: probe-mutants' verdicts, when it ran), and at
    least the assignment's share of its mutants is named in its own words."""
    started = time.monotonic()
    try:
        if seeds:
            swept, problems = _swept(grader, assignment, work, seeds, seeds), []
            swept_under = f"{seeds} seeds" + (f", then every line with drawn sizes or near its tolerance under {NEAR_SEEDS}"
                                              if seeds < NEAR_SEEDS else "")
        else:
            swept, problems, whole = _with_record(grader, assignment, work)
            swept_under = (f"every line under {NEAR_SEEDS} seeds ({whole}); named under {SWEEP_SEEDS} seeds "
                           f"(fixed sizes: {FIXED_SEEDS})")
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as err:
        return Row(name, SWEEP_CHECK, False, str(err)[:400])
    problems += [f"{assignment.folder / task / 'mutants'}: {label}'s cell raised {error}"
                 for task, v in swept.items() for label, error in v.get("broken", {}).items()]
    problems += flipped_lines(assignment, swept)
    problems += graded_otherwise(assignment, graded or {}, swept)
    counted, unnamed, raising, misnamed = named_share(assignment, swept)
    share = 1 - len(unnamed) / len(counted) if counted else 1.0
    if share < assignment.layout.named_mutants:
        problems.append(f"{len(unnamed)} of {len(counted)} mutants are never named in their own words on a line they "
                        f"fail ({share:.0%}; {assignment.folder / 'assignment.py'} asks for at least "
                        f"{assignment.layout.named_mutants:.0%}): {'; '.join(unnamed)}")
    implementations = sum(len(v["lines"]) for v in swept.values())
    lines = sum(len(probes) for v in swept.values() for probes in v["lines"].values())
    detail = (f"{swept_under} × {lines} lines of {implementations} implementations in {time.monotonic() - started:.0f} s; "
              f"{len(counted) - len(unnamed)} of {len(counted)} mutants named ({share:.0%}), {misnamed} failed lines "
              f"named as another mutant"
              + (f"; {len(raising)} fail only by raising, told their error: " + ", ".join(Path(p).stem for p in raising)
                 if raising else ""))
    return Row(name, SWEEP_CHECK, not problems, "; ".join(problems[:8]) or detail)


SOLUTION_SEEDS = 100  # the sweep's first seeds, graded again by grading's own path (about 15 s)
SOLUTION_SEEDS_CHECK = f"the solution scores full under {SOLUTION_SEEDS} seeds, graded"


def solution_seeds_row(name: str, grader: BundledGrader, solution: Path, work: Path) -> Row:
    """The sweep's first seeds again, through grading's own path (grade_under_seeds: the solution's notebook run once in
    a graded kernel, its tasks graded once per seed, as a submission is): the solution scores full under each, as the
    sweep's runner found it did."""
    out = work / "seeds.json"
    done = grader.run("probe-seeds", str(solution), "--autograder", str(grader.zip), "--out", str(out),
                      "--seeds", str(SOLUTION_SEEDS))
    if done.returncode != 0 or not out.exists():
        return Row(name, SOLUTION_SEEDS_CHECK, False, done.stderr[-400:])
    short = not_full(json.loads(out.read_text()))
    return Row(name, SOLUTION_SEEDS_CHECK, not short, "; ".join(short[:5]) or f"seeds 0 .. {SOLUTION_SEEDS - 1}")


def not_full(per_seed: dict) -> list[str]:
    """Each (seed, task) of probe-seeds' {seed: {unit: results entry}} that lost points, with its first failed line."""
    found = []
    for seed, units in per_seed.items():
        for entry in units.values():
            if entry["score"] < entry["max_score"]:
                failed = next((line for line in entry.get("output", "").splitlines() if line.startswith("✗")), "")
                found.append(f"seed {seed}: {entry['name']} {entry['score']:g}/{entry['max_score']:g} {failed[:160]}".rstrip())
    return found


def evidence_row(name: str, assignment, grader: BundledGrader) -> Row:
    """Every task has a probe no placeholder passes (zeros, an input returned, uniform weights, x @ W): lines
    a placeholder passes earn only beside one, so a task without one could never give correct work its points."""
    check = "every task has a probe no placeholder passes"
    out = grader.work / "evidence.json"
    done = grader.run("probe-evidence", "--autograder", str(grader.zip), "--out", str(out))
    if done.returncode != 0:
        return Row(name, check, False, done.stderr[-400:])
    verdict = json.loads(out.read_text())
    missing = verdict["missing"]
    detail = "; ".join(f"{assignment.folder / task / 'task.py'}: under {count} of {verdict['seeds']} seeds every probe of "
                       f"{task} is passed by a placeholder too (add a general case: random inputs, several keys or tokens)"
                       for task, count in missing.items()) or f"{verdict['seeds']} seeds"
    return Row(name, check, not missing, detail)


def check_release(release: Path, course: Path, zips: list[Path] | None = None, sweep_seeds: int | None = None) -> list[Row]:
    """Rows for every zip (default: every zip under release/autograder)."""
    zips = zips or sorted((Path(release) / "autograder").glob("*-autograder*.zip"))
    if not zips:
        return [Row("-", "autograder zips", False, f"none under {Path(release) / 'autograder'}: run attn-ref build")]
    rows = []
    for zip_path in zips:
        try:
            rows += check_zip(Path(zip_path), Path(release), Path(course), sweep_seeds)
        except Exception as err:  # noqa: BLE001 - a check that cannot run is a failed check, with its reason
            rows.append(Row(Path(zip_path).name, "the checks ran", False, f"{type(err).__name__}: {err}"[:400]))
    return rows
