"""What the attacks on the grader share (tests/end_to_end/test_attacks_*, test_gradescope_as_root, test_root_batch,
test_ta_as_user): the hostile notebooks, the modes' fixtures (local, gradescope, as_user; a plugin of conftest.py),
and what every attack must leave: a sound result, no kernel process, no file in shared folders.

Modes (docs/security.md):
* ``gradescope``: the zip's own setup.sh and run_autograder as root in a simulated /autograder, with
  namespaces where bubblewrap works and with them forced off (Gradescope's Docker blocks them);
* ``local``: `grade()` in this process as root (a TA as root): fresh uids, namespaces;
* ``as_user``: `attn-ref grade` run by an ordinary user (a TA's laptop), with namespaces and forced off.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value,
leaves a valid results.json, no process of any kernel uid and no file of it in shared folders.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
import subprocess
import tempfile
import zipfile
from pathlib import Path

import nbformat
import psutil
import pytest
import yaml
from conftest import edit_notebook, hidden_characters, json_strings
from course_units import ANSWERS

from attn_ref.grade import grade
from attn_ref.grade.isolation.cleanup import DEFAULT_UID_RANGE
from attn_ref.grade.isolation.sandbox import resolve

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as on Gradescope and in CI")


ATTACKS = Path(__file__).parent / "attacks"


FAST = dict(cell_timeout=20, call_timeout=8, notebook_timeout=60)


SECRETS = [str(v) for k, v in ANSWERS.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 100]


SECRETS += ["0.0164", "0.00572", "67.108864", "0.01642"]


TA_USER = "attnref-ta"


def attack(name: str, **fill) -> str:
    source = (ATTACKS / f"{name}.py").read_text()
    for key, value in fill.items():
        source = source.replace(f"__{key}__", value)
    return source


def notebook(release, name: str, kind: str):
    out, _ = release
    folder = "solutions" if kind == "solution" else "assignments"
    return nbformat.read(str(out / folder / name / f"{name}.ipynb"), as_version=4)


def appended(nb, *sources: str, at: int | None = None):
    """A copy with code cells added (at the end, or before code cell number `at`)."""
    nb = copy.deepcopy(nb)
    cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if at is None:
        nb.cells.extend(cells)
    else:
        index = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"][at]
        nb.cells[index:index] = cells
    return nb


def replaced(nb, marker: str, source: str):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code" and marker in cell.source:
            cell.source = source
    return nb


def with_function(release, name: str, marker: str, source: str, kind="solution"):
    out, _ = release
    folder = "solutions" if kind == "solution" else "assignments"
    return edit_notebook(out / folder / name / f"{name}.ipynb", {marker: source})


LAB_FUNCTIONS = {"def softmax(": "softmax", "def additive_attention(": "additive_attention",
                 "def scaled_dot_product_attention(": "scaled_dot_product_attention", "def causal_mask(": "causal_mask",
                 "def self_attention(": "self_attention", "def decode_with_kv_cache(": "decode_with_kv_cache",
                 "def sliding_window_mask(": "sliding_window_mask", "def rnn_gradient_norm(": "rnn_gradient_norm"}


def every_function_calls(nb, body: str):
    for marker, name in LAB_FUNCTIONS.items():
        nb = replaced(nb, marker, f"def {name}(*args, **kwargs):\n    {body}")
    return nb


def visible_text(results: dict) -> str:
    return results["output"] + "".join(t["output"] + t["name"] for t in results["tests"])


def kernel_uid_processes(uids: set[int] | None = None) -> list[psutil.Process]:
    """Processes of the given kernel uids (default: every uid of the kernel range; other graders running on
    this machine at the same time use that range too)."""
    first, last = DEFAULT_UID_RANGE
    return [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and first <= p.info["uids"].real <= last
            and (uids is None or p.info["uids"].real in uids)]


def assert_sound(results: dict):
    """A valid results.json that leaks no answer into what students see, with nothing left running."""
    assert isinstance(results["score"], (int, float)) and results["tests"]
    for test in results["tests"]:
        assert 0 <= test["score"] <= test["max_score"]
    text = visible_text(results)
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, leaked
    uid = (results["extra_data"].get("kernel") or {}).get("uid")
    if uid is not None and uid != os.geteuid():
        assert not kernel_uid_processes({uid}), "processes of the kernel's uid were left behind"


@pytest.fixture
def local(release, tmp_path):
    """Grade as a TA as root would, in this process: fresh uids; ``namespaces`` on where they work, or off."""

    def run(nb, name: str, namespaces: str = "auto", **limits) -> dict:
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, str(path))
        plan = resolve(namespaces=namespaces)
        # what this test process ran before (another test's Dask cluster leaves multiprocessing's resource tracker)
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        results = grade(path, release[0] / "autograder" / f"{name}-autograder.zip", out_dir=tmp_path, plan=plan,
                        **{**FAST, **limits})
        assert json.loads((tmp_path / "results" / f"{name}.json").read_text()) == results
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        assert left == [], "grading left processes behind"
        assert_sound(results)
        return results

    return run


BOTH = pytest.mark.parametrize("namespaces", ["auto", "off"])


IGNORES_INTERRUPTS = """def sliding_window_mask(T, window, device=None):
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass"""


def answer_spellings() -> list[str]:
    spellings = set()
    for value in ANSWERS.values():
        if isinstance(value, bool) or isinstance(value, dict):
            continue
        if isinstance(value, int) and value > 100:
            spellings |= {str(value), f"{value:,}"}
        elif isinstance(value, float):
            spellings |= {f"{value:.{n}g}" for n in (3, 4, 5, 6)} | {f"{value:.{n}f}" for n in (4, 5, 6)}
    return sorted(s for s in spellings if len(s) >= 4)


@pytest.fixture(scope="session")
def gradescope(release):
    """The zips' own setup.sh and run_autograder, as root, in a simulated /autograder per assignment."""
    out, _ = release
    base = Path(tempfile.mkdtemp(prefix="attn-ref-gradescope-", dir="/var/tmp"))
    base.chmod(0o755)
    prefix = "/var/tmp/attn-ref-test-envs"  # kept between runs: setup.sh is idempotent and then quick
    python3 = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"  # runnable by every uid
    roots = {}
    for name in ("practice", "lab"):
        root = base / name / "autograder"
        for folder in ("source", "submission", "results"):
            (root / folder).mkdir(parents=True)
        with zipfile.ZipFile(out / "autograder" / f"{name}-autograder.zip") as archive:
            archive.extractall(root / "source")
        env = dict(os.environ, AUTOGRADER_ROOT=str(root), ATTN_REF_PREFIX=prefix, ATTN_REF_TORCH_INDEX="",
                   ATTN_REF_PYTHON=python3)
        done = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True, timeout=1500)
        assert done.returncode == 0, done.stderr[-3000:]
        roots[name] = root

    def submit(name: str, nb, namespaces: str = "auto", budget: float | None = None) -> dict:
        root = roots[name]
        shutil.rmtree(root / "submission")
        (root / "submission").mkdir()
        nbformat.write(nb, str(root / "submission" / f"{name}.ipynb"))
        env = dict(os.environ, AUTOGRADER_ROOT=str(root), ATTN_REF_PREFIX=prefix, ATTN_REF_NAMESPACES=namespaces)
        env.pop("PYTHONPATH", None)
        subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, timeout=900, check=True)
        results = json.loads((root / "results" / "results.json").read_text())
        assert_sound(results)
        return results

    yield submit, roots, prefix
    shutil.rmtree(base, ignore_errors=True)


STAND_IN_LINES = sorted({line.strip() for unit in ("c1", "c3", "c4")
                         for line in (Path(__file__).parents[1] / "course/lab" / unit / "substitute.py").read_text().splitlines()
                         if len(line.strip()) > 12 and not line.startswith("def ")})  # signatures are the starter's


def strings(value) -> list[str]:
    return [text for _, text in json_strings(value)]


def stand_in_thief(release, mode: str):
    """The lab's setup cell, then every function of steal_stand_ins (mode "frames" or "later"), then a cell that
    raises what a killed kernel left on disk when the notebook runs again."""
    source = attack("steal_stand_ins", MODE=mode, TAG=f"{os.getpid()}-{mode}")
    raise_kept = "import os\nif os.path.exists(KEPT):\n    raise RuntimeError(open(KEPT).read())"
    nb = notebook(release, "lab", "blank")
    setup = next(c for c in nb.cells if c.cell_type == "code")
    nb.cells = [setup, nbformat.v4.new_code_cell(source), nbformat.v4.new_code_cell(raise_kept)]
    return nb


def assert_no_stand_in_in(results: dict):
    text = "\n".join(strings(results))
    leaked = [line for line in STAND_IN_LINES if line in text]
    assert not leaked, leaked
    by_unit = {t["name"].split(":")[0]: t for t in results["tests"]}
    assert all("stood in" in by_unit[u]["output"] for u in ("c2", "c5", "c6")), "the stand-ins were not in use"
    assert all(by_unit[u]["score"] < by_unit[u]["max_score"] for u in ("c1", "c3", "c4"))
    assert all(by_unit[u]["score"] == 0 for u in ("c2", "c5", "c6"))


@pytest.fixture
def root_only_file():
    """A file only root may change, in a folder every user can reach: the target of the link attacks."""
    folder = Path(tempfile.mkdtemp(prefix="attn-ref-target-", dir="/var/tmp"))
    folder.chmod(0o755)
    target = folder / "root-only"
    target.write_text("ROOT ONLY\n")
    target.chmod(0o600)
    before = target.stat()
    yield target
    after = target.stat()
    assert (after.st_uid, after.st_mode, after.st_size, after.st_mtime_ns) == (before.st_uid, before.st_mode, before.st_size, before.st_mtime_ns)
    assert target.read_text() == "ROOT ONLY\n" and sorted(p.name for p in folder.iterdir()) == ["root-only"]
    shutil.rmtree(folder)


def _shm_keys() -> set[int]:
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()
    return {int(row.split()[0]) for row in rows[1:] if row.split()}


def class_folder(release, folder: Path, hostile: dict, honest: list[str]) -> Path:
    """A lab class: hostile notebooks beside copies of the solution."""
    out, _ = release
    folder.mkdir()
    folder.chmod(0o755)
    for name, nb in hostile.items():
        nbformat.write(nb, str(folder / f"{name}.ipynb"))
    for name in honest:
        shutil.copy(out / "solutions/lab/lab.ipynb", folder / f"{name}.ipynb")
    return folder


def graded_class(release, tmp_path, hostile: dict, honest: list[str], namespaces: str, jobs: int = 1,
                 cluster: str | None = None, plan=None, graded: Path | None = None) -> tuple[dict, set]:
    """A lab class graded as a batch into ``graded`` (default tmp_path/graded; ``jobs`` at once, or on
    ``cluster``; ``plan``: the sandbox, default resolved for ``namespaces``): {name: total} and the kernel
    uids it used."""
    from attn_ref.grade.classroom.batch import grade_batch

    out, _ = release
    graded = graded or tmp_path / "graded"
    folder = class_folder(release, tmp_path / "class", hostile, honest)
    options = dict(cluster=cluster) if cluster else dict(jobs=jobs, plan=plan or resolve(namespaces=namespaces))
    report = grade_batch(folder, out / "autograder/lab-autograder.zip", graded, progress=False, **options, **FAST)
    results = {p.stem: json.loads(p.read_text())["extra_data"] for p in (graded / "results").iterdir()}
    unstarted = {name: extra.get("status") for name, extra in results.items() if "kernel" not in extra}
    assert not unstarted, f"graded without a kernel: {unstarted}"
    uids = {extra["kernel"].get("uid") for extra in results.values()}
    return {row["name"]: float(row["total"]) for row in report.book.rows}, uids


def eavesdropper(release):
    """A blank lab notebook whose first cell listens to every kernel channel it can find; its last runs what it heard."""
    listen = attack("eavesdrop", SECONDS="15")
    run_heard = listen.split('RUN_HEARD = """', 1)[1].rsplit('"""', 1)[0]
    return appended(appended(notebook(release, "lab", "blank"), listen, at=1), run_heard)


MEMORY_HOG = """
import os, time
children = []
for _ in range(8):  # 8 x 256 MB: each far under the per-process cap, together past the kernel's bound
    pid = os.fork()
    if pid == 0:
        hog = b"x" * (256 << 20)  # written, so resident
        time.sleep(60)  # and then it ends by itself, whatever happens
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


CPU_HOG = """
import os, time
for _ in range(8):  # busy processes beside the kernel, each for 45 s at most
    if os.fork() == 0:
        end = time.time() + 45
        while time.time() < end:
            pass
        os._exit(0)
time.sleep(15)
"""


def kernel_cgroups() -> set[Path]:
    """Kernels' cgroups in this process's hierarchies (other graders on this machine may have some too)."""
    from attn_ref.grade.isolation.resources import own_hierarchies

    return {p for h in own_hierarchies().values() for p in h.folder.glob("attn-ref-*")}


def left_behind(cgroups: set[Path], elsewhere: Path) -> set[Path]:
    """Those of ``cgroups`` that are not another grader's: a grading's cgroup is named after its base folder,
    so one whose base lives in ``elsewhere`` (the temporary folder of the other tests and graders, while
    this test's gradings put theirs in a folder of its own) belongs to a grading still running there; a
    grading removes its cgroup before its base, so one of those that ended is gone by the time its base is."""
    return {c for c in cgroups if not (elsewhere / c.name).exists() and c.exists()}


def csv_rows(path: Path) -> list[dict]:
    import csv

    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


class TasOwnKernel:
    """A Jupyter kernel of the TA's (root's), on TCP as Jupyter's kernels are by default, that runs the lab's
    solution cell by cell, again and again, while it lives: the solution open in the TA's own notebook."""

    def __init__(self, cells: list[str]):
        import threading

        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3")
        assert self.manager.transport == "tcp"
        self.cells, self.stop, self.runs = cells, threading.Event(), 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            for cell in self.cells:
                self.client.execute_interactive(cell, timeout=30, output_hook=lambda _: None)
            self.runs += 1
            self.stop.wait(0.3)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def solution_functions(release) -> list[str]:
    return [c.source for c in notebook(release, "lab", "solution").cells
            if c.cell_type == "code" and c.source.lstrip().startswith("def ")]


FORGED = ("✓ FORGED (3/3)", "9 submissions ok, 0 not ok", "warning: FORGED")  # lines only the grader may begin


FORGED_TEXT = "x\n" + "\n".join(FORGED) + "\r\n\x1b[2J\x9b31m\u202e\u2028\u200b\x00"


def out_reader(release, out: Path):
    """A blank lab notebook that looks for the grader's output folder and reads what it can of it (tests/attacks)."""
    return appended(notebook(release, "lab", "blank"), attack("read_out", OUT=str(out), SECONDS="10",
                                                               SOLUTION=repr("\n\n".join(solution_functions(release)))))


def hostile_export(release, folder: Path, out: Path) -> Path:
    """A Gradescope export of a lab class, zipped: an out-folder reader, an honest student, a text forger (a
    function that raises the grader's own lines, a cell that does), a zip of notebooks named with them, and
    a bomb; every student's name, SID and email full of hidden characters and forged lines."""
    export = folder / "assignment_42_export"
    forger = replaced(notebook(release, "lab", "solution"), "def softmax(",
                      f"def softmax(x, axis=-1):\n    raise ValueError({FORGED_TEXT!r})")
    notebooks = {"submission_1": out_reader(release, out), "submission_2": notebook(release, "lab", "solution"),
                 "submission_3": appended(forger, f"raise RuntimeError({FORGED_TEXT!r})")}
    for key, nb in notebooks.items():
        (export / key).mkdir(parents=True)
        nbformat.write(nb, str(export / key / "lab.ipynb"))
    (export / "submission_4").mkdir()
    with zipfile.ZipFile(export / "submission_4" / "lab.zip", "w") as archive:
        for name in ("a" + FORGED_TEXT.replace("\x00", "") + ".ipynb", "b.ipynb"):  # zip names end at a NUL
            archive.writestr(name, nbformat.writes(notebook(release, "lab", "blank")))
    (export / "submission_5").mkdir()
    (export / "submission_5" / "lab.ipynb").write_bytes(bytes(80 << 20))  # past 64 MB unpacked: a bomb
    metadata = {key: {":submitters": [{":name": f"Student {key[-1]}{FORGED_TEXT}", ":sid": f"\x00\x0bS{key[-1]}\u202e",
                                       ":email": f"\x1b[2J{key}@uni.edu\n{FORGED[1]}"}], ":score": "80.0"}
                for key in [*notebooks, "submission_4", "submission_5"]}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata), encoding="utf-8")
    zipped = folder / "export.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(export.rglob("*")):
            archive.write(path, path.relative_to(folder))
    shutil.rmtree(export)
    return zipped


def assert_plain(text: str, where: str, lines: bool = False) -> None:
    """No hidden character (but newlines and tabs where ``lines``), and no line that only the grader may begin."""
    hidden = hidden_characters(text, lines)
    assert not hidden, (where, hidden[:5])
    begun = [line for line in text.splitlines() if line.lstrip("\ufeff").startswith(FORGED)]
    assert not begun, (where, begun[:3])


def assert_in_custody(out: Path, printed: str) -> None:
    """Everything the grader wrote under ``out`` is its owner's alone (0700 folders, 0600 files, no link),
    and no output, printed or written, holds a hidden character or a line the grader did not begin."""
    for path in [out, *out.rglob("*")]:
        mode = path.lstat().st_mode
        assert not stat.S_ISLNK(mode), path
        assert stat.S_IMODE(mode) == (0o700 if stat.S_ISDIR(mode) else 0o600), (path, oct(mode))
        if path.suffix == ".json" and "results" in path.parts:
            for key, text in json_strings(json.loads(path.read_text(encoding="utf-8"))):
                assert_plain(text, f"{path.name}:{key}", lines=key == "output")
        elif path.suffix == ".csv":
            from attn_ref.grade.classroom.spreadsheet import needs_escape

            for cell in csv_cells(path):
                assert_plain(cell, path.name)
                assert not needs_escape(cell) or _number(cell), (path.name, cell)
        elif path.suffix == ".html":
            assert_plain(path.read_text(encoding="utf-8"), path.name, lines=True)
    assert_plain(printed, "the console", lines=True)


def csv_cells(path: Path) -> list[str]:
    import csv

    with open(path, newline="", encoding="utf-8-sig") as f:
        return [cell for row in csv.reader(f) for cell in row]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="session")
def as_user(release, gradescope):
    """`attn-ref grade` run by an ordinary user, with the students' environment of setup.sh."""
    _, _, prefix = gradescope
    out, _ = release
    if subprocess.run(["id", TA_USER], capture_output=True).returncode != 0:
        made = subprocess.run(["useradd", "--create-home", TA_USER], capture_output=True, text=True)
        # another test worker may have made the user in between: what matters is that it exists now
        assert subprocess.run(["id", TA_USER], capture_output=True).returncode == 0, made.stderr
    work = Path(tempfile.mkdtemp(prefix="attn-ref-ta-", dir="/var/tmp"))
    shutil.copytree(Path(__file__).parents[1] / "attn_ref", work / "src" / "attn_ref")
    for name in ("solutions/lab/lab.ipynb", "assignments/practice/practice.ipynb", "assignments/lab/lab.ipynb",
                 "autograder/lab-autograder.zip", "autograder/practice-autograder.zip"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(out / name, work / name)
    student_python = f"{prefix}/student/bin/python"
    subprocess.run([student_python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(work / "extra"),
                    "array-api-compat"], check=True)
    subprocess.run(["chown", "-R", TA_USER, str(work)], check=True)
    work.chmod(0o700)

    def run(args: list[str], namespaces: str = "auto", secret: str = "") -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": f"{work}/src:{work}/extra",
               "ATTN_REF_KERNEL_PYTHON": student_python, "ATTN_REF_NAMESPACES": namespaces, "TA_TOKEN": secret}
        cmd = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", TA_USER, "--", student_python, "-m", "attn_ref", *args]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=work)

    yield work, run
    shutil.rmtree(work, ignore_errors=True)
