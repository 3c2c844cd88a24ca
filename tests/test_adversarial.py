"""Hostile and broken submissions. Each scores no more than an honest wrong answer for what it attacks,
leaks no expected value into what students see, leaves a valid results.json and no process behind.

Two ways to grade: `local` (a TA's machine: the kernel runs as the grader's own user, this environment)
and `gradescope` (the zip's own setup.sh and run_autograder, run for real as root: separate grader and
student environments, an unprivileged kernel user, root-only autograder files). The second needs root,
as on Gradescope and in CI.
"""

from __future__ import annotations

import copy
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
import psutil
import pytest

from attn_ref.answers import ANSWERS
from attn_ref.grade import grade
from conftest import edit_notebook, max_scores, scores

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as on Gradescope and in CI")
KERNEL_USER = "attnref-kernel"
FAST = dict(cell_timeout=20, call_timeout=8, notebook_timeout=60)
SECRETS = [str(v) for k, v in ANSWERS.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 100]
SECRETS += ["0.0164", "0.00572", "67.108864"]


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


def with_function(release, name: str, marker: str, source: str, kind="solution"):
    out, _ = release
    folder = "solutions" if kind == "solution" else "assignments"
    return edit_notebook(out / folder / name / f"{name}.ipynb", {marker: source})


def visible_text(results: dict) -> str:
    return results["output"] + "".join(t["output"] + t["name"] for t in results["tests"])


def assert_sound(results: dict):
    """A valid results.json that leaks no answer into what students see."""
    assert isinstance(results["score"], (int, float)) and results["tests"]
    for test in results["tests"]:
        assert 0 <= test["score"] <= test["max_score"]
    text = visible_text(results)
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, leaked


@pytest.fixture
def local(release, tmp_path):
    """Grade as a TA would: same user, this environment, short timeouts; checks nothing is left running."""

    def run(nb, name: str, **limits) -> dict:
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, str(path))
        results = grade(path, release[0] / "autograder" / f"{name}-autograder.zip", out_dir=tmp_path, **{**FAST, **limits})
        assert json.loads((tmp_path / "results" / f"{name}.json").read_text()) == results
        assert psutil.Process().children(recursive=True) == [], "grading left processes behind"
        assert_sound(results)
        return results

    return run


# ---- attacks on the answers (practice) -------------------------------------------------------------

def test_patched_otter_checker_changes_nothing(release, local):
    nb = appended(notebook(release, "practice", "blank"), """
import otter
from otter.test_files import ok_test
ok_test.run_doctest = lambda *args, **kwargs: (True, "")
otter.execute.checker.Checker.get_results = classmethod(lambda cls: [])
q4_scores_T8, q4_scores_T32, q4_ratio = 63, 1000, 15
""")
    results = local(nb, "practice")
    assert results["score"] == 0
    flags = "\n".join(results["extra_data"]["integrity_flags"])
    assert "replaces ok_test.run_doctest" in flags and "replaces otter.execute.checker.Checker.get_results" in flags


def test_values_that_lie_about_equality_are_read_as_plain_numbers(release, local):
    nb = appended(notebook(release, "practice", "blank"), """
class Yes(float):
    def __eq__(self, other):
        return True
    def __repr__(self):
        return open("tests/q8.py").read()
    __hash__ = float.__hash__
q8_product_39 = Yes(0.017)
q5_rnn_product = Yes(1.0)
q4_ratio = Yes(4.0)
""")
    results = local(nb, "practice")
    assert results["score"] == 0
    assert any("defines __eq__" in f for f in results["extra_data"]["integrity_flags"])


def test_importing_the_reference_scores_zero(release, local):
    """Seen in the code: every answer scores 0. Hidden from the parser: the kernel cannot import it."""
    nb = appended(notebook(release, "practice", "solution"), "import attn_ref")
    results = local(nb, "practice")
    assert results["score"] == 0 and "attn_ref" in results["output"]
    hidden = "name = ''.join(reversed('srewsna.fer_ntta'))\nkey = __import__(name, fromlist=['ANSWERS']).ANSWERS\nglobals().update(key)"
    results = local(appended(notebook(release, "practice", "blank"), hidden), "practice")
    assert results["score"] == 0
    assert any("ImportError" in e and "grader's reference" in e for e in results["extra_data"]["cell_errors"])


# ---- attacks on the lab's probes ---------------------------------------------------------------------

def test_infinite_loops_in_a_task_and_in_a_cell(release, local):
    nb = with_function(release, "lab", "def additive_attention(", "def additive_attention(*args):\n    while True:\n        pass")
    nb = appended(nb, "while True:\n    pass")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c2"] == 0 and "did not finish" in next(t["output"] for t in results["tests"] if t["name"].startswith("c2"))
    assert {k: v for k, v in got.items() if k != "c2"} == {k: v for k, v in full.items() if k != "c2"}
    assert any("stopped after" in e for e in results["extra_data"]["cell_errors"])


def test_a_loop_that_ignores_interrupts_restarts_the_kernel(release, local):
    nb = with_function(release, "lab", "def sliding_window_mask(", """def sliding_window_mask(T, window, device=None):
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass""")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c7"] == 0 and got["c8"] == full["c8"]
    assert results["extra_data"]["kernel_restarts"] >= 1


def test_exits_in_tasks_and_cells(release, local):
    nb = with_function(release, "lab", "def causal_mask(", "def causal_mask(T, device=None):\n    import os\n    os._exit(3)")
    nb = edit_notebook_cells(nb, "def self_attention(", "def self_attention(x, W_q, W_k, W_v, causal=True):\n    raise SystemExit(0)")
    nb = appended(nb, "import os\nos._exit(1)", at=4)  # a cell that kills the kernel, between tasks
    nb = appended(nb, "import sys\nsys.exit(0)")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    outputs = {t["name"][:2]: t["output"] for t in results["tests"]}
    assert got["c4"] == 0 and "crashed the kernel" in outputs["c4"]
    assert got["c5"] == 0 and "SystemExit" in outputs["c5"]
    for task in ("c1", "c2", "c3", "c6", "c7", "c8"):  # c6 and c7 still run: the killing cell is skipped
        assert got[task] == full[task], (task, outputs[task])
    assert any("skipped (it crashed the kernel)" in e for e in results["extra_data"]["cell_errors"])


def edit_notebook_cells(nb, marker, source):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code" and marker in cell.source:
            cell.source = source
    return nb


def test_huge_allocations_hit_the_memory_limit(release, local):
    nb = appended(notebook(release, "lab", "solution"), "import numpy as np\nbig = np.ones(6 * 10**8)  # 4.8 GB")
    results = local(nb, "lab")
    assert results["score"] == 80
    assert any("MemoryError" in e for e in results["extra_data"]["cell_errors"])


def test_global_torch_settings_are_reset_before_each_call(release, local):
    nb = appended(notebook(release, "lab", "solution"), """
torch.set_default_dtype(torch.float64)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.set_float32_matmul_precision("medium")
np.random.seed(1)
""")
    assert local(nb, "lab")["score"] == 80


def test_patched_comparisons_do_not_rescue_a_wrong_answer(release, local):
    nb = with_function(release, "lab", "def scaled_dot_product_attention(", """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights""")
    nb = appended(nb, """
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
torch.allclose = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
np.array_equal = lambda *a, **k: True
""")
    results = local(nb, "lab")
    assert scores(results)["c3"] < 10
    flags = "\n".join(results["extra_data"]["integrity_flags"])
    assert "replaces np.allclose" in flags and "replaces torch.allclose" in flags


def test_tripwire_catches_a_forbidden_call_the_parser_cannot_see(release, local):
    nb = with_function(release, "lab", "def scaled_dot_product_attention(", """def scaled_dot_product_attention(q, k, v, mask=None):
    fast = getattr(torch.nn.functional, "scaled_dot" + "_product_attention")
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return fast(q, k, v, attn_mask=mask), weights""")
    results = local(nb, "lab")
    got = scores(results)
    assert got["c3"] == 0 and got["c5"] == 0 and got["c6"] == 0  # c5 and c6 reach it through c3
    assert "called scaled_dot_product_attention" in next(t["output"] for t in results["tests"] if t["name"].startswith("c3"))
    assert "c3" in results["extra_data"]["forbidden_calls"]


def test_objects_that_pretend_to_be_answers(release, local):
    nb = with_function(release, "lab", "def causal_mask(", """class Liar(torch.Tensor):
    def __eq__(self, other):
        return True

def causal_mask(T, device=None):
    return torch.zeros(T, T, dtype=torch.bool, device=device).as_subclass(Liar)""")
    nb = edit_notebook_cells(nb, "def rnn_gradient_norm(", """class Number:
    def __float__(self):
        return 0.9 ** 49

def rnn_gradient_norm(T, factor):
    return Number()""")
    results = local(nb, "lab")
    got = scores(results)
    assert got["c4"] <= 2  # what an honest all-False mask on the right device earns (the device probe)
    assert got["c8"] == 0


def test_fake_results_and_orphans_in_a_new_session(release, local, tmp_path):
    nb = appended(notebook(release, "practice", "blank"), f"""
import json, os, subprocess
fake = {{"score": 1000, "tests": []}}
print(json.dumps(fake))
for path in ["{tmp_path}/results/practice.json", "results.json", "/autograder/results/results.json"]:
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        open(path, "w").write(json.dumps(fake))
    except OSError:
        pass
subprocess.Popen(["setsid", "sleep", "313"])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(313)
    os._exit(0)
""")
    results = local(nb, "practice")  # also asserts no process is left behind
    assert results["score"] == 0
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and "313" in p.info["cmdline"]]


def test_the_time_budget_always_leaves_results(release, local):
    nb = with_function(release, "lab", "def softmax(", """def softmax(x, axis=-1):
    time.sleep(2.5)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)""")
    results = local(nb, "lab", budget=25)
    assert results["execution_time"] < 40
    text = visible_text(results)
    assert "time budget for this submission ran out" in text
    assert results["extra_data"]["status"] == "timeout"


def test_the_grader_never_imports_torch(release, tmp_path):
    out, _ = release
    code = f"""
import sys
from attn_ref.grade import grade
results = grade({str(out / 'solutions/lab/lab.ipynb')!r}, {str(out / 'autograder/lab-autograder.zip')!r}, out_dir={str(tmp_path)!r})
assert results["score"] == 80, results["score"]
assert "torch" not in sys.modules, "the grader imported torch"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().endswith("ok"), done.stderr[-2000:]


# ---- the same, for real, in Gradescope's layout (root) ---------------------------------------------

@pytest.fixture(scope="session")
def gradescope(release):
    """The zips' own setup.sh and run_autograder, as root, in a simulated /autograder per assignment."""
    out, _ = release
    base = Path(tempfile.mkdtemp(prefix="attn-ref-gradescope-", dir="/var/tmp"))
    base.chmod(0o755)
    prefix = "/var/tmp/attn-ref-test-envs"  # kept between runs: setup.sh is idempotent and then quick
    python3 = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"  # readable by the kernel user
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
    uid = pwd.getpwnam(KERNEL_USER).pw_uid

    def submit(name: str, nb) -> dict:
        root = roots[name]
        shutil.rmtree(root / "submission")
        (root / "submission").mkdir()
        nbformat.write(nb, str(root / "submission" / f"{name}.ipynb"))
        env = dict(os.environ, AUTOGRADER_ROOT=str(root), ATTN_REF_PREFIX=prefix)
        env.pop("PYTHONPATH", None)
        subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, timeout=900, check=True)
        results = json.loads((root / "results" / "results.json").read_text())
        left = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == uid]
        assert not left, f"processes of {KERNEL_USER} left behind: {left}"
        assert_sound(results)
        return results

    yield submit, roots, prefix
    shutil.rmtree(base, ignore_errors=True)


@ROOT_ONLY
def test_gradescope_solution_and_blank(release, gradescope):
    submit, roots, prefix = gradescope
    results = submit("lab", notebook(release, "lab", "solution"))
    assert results["score"] == 80
    kernel_uid = results["extra_data"]["kernel"]["uid"]
    assert kernel_uid == pwd.getpwnam(KERNEL_USER).pw_uid and results["extra_data"]["grader"]["uid"] == 0
    assert results["extra_data"]["warnings"] == []
    assert submit("lab", notebook(release, "lab", "blank"))["score"] == 0
    assert submit("practice", notebook(release, "practice", "solution"))["score"] == 23
    source = roots["lab"] / "source"
    assert (source.stat().st_mode & 0o077) == 0 and ((source / "checks.json").stat().st_mode & 0o077) == 0
    assert (Path(prefix) / "grader").stat().st_mode & 0o077 == 0


@ROOT_ONLY
def test_gradescope_kernel_cannot_read_checks_or_write_results(release, gradescope):
    submit, roots, _ = gradescope
    root = roots["practice"]
    nb = appended(notebook(release, "practice", "blank"), f"""
import json
try:
    checks = json.load(open("{root}/source/checks.json"))
    for q in checks["questions"]:
        for a in q["answers"]:
            globals()[a["name"]] = dict(a["expected"]) if a["kind"] == "int_dict" else a["expected"]
except OSError as err:
    print("no access:", err)
try:
    open("{root}/results/results.json", "w").write('{{"score": 1000}}')
except OSError as err:
    print("no access:", err)
import attn_ref  # not in the students' environment
""")
    results = submit("practice", nb)
    assert results["score"] == 0
    assert any("ModuleNotFoundError" in e or "ImportError" in e for e in results["extra_data"]["cell_errors"])
    assert any("hidden checks file" in f for f in results["extra_data"]["integrity_flags"])


@ROOT_ONLY
def test_gradescope_fork_bomb_and_orphans_are_contained(release, gradescope):
    submit, _, _ = gradescope
    nb = appended(notebook(release, "lab", "solution"), """
import os, subprocess, time
subprocess.Popen(["setsid", "sleep", "313"])
forked = 0
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    forked += 1
print("forked", forked)
""")
    results = submit("lab", nb)  # also asserts nothing of the kernel user is left
    assert results["score"] == 80
    assert results["extra_data"]["processes_ended"] >= 2
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and "313" in p.info["cmdline"]]


@ROOT_ONLY
def test_non_root_grader_runs_the_kernel_as_itself(release, gradescope, tmp_path):
    """A TA's laptop: the grader is an ordinary user, so the kernel runs as that same user."""
    _, _, prefix = gradescope
    out, _ = release
    work = Path(tempfile.mkdtemp(prefix="attn-ref-nonroot-", dir="/var/tmp"))
    try:
        work.chmod(0o777)
        shutil.copytree(Path(__file__).parents[1] / "attn_ref", work / "src" / "attn_ref")
        for name in ("solutions/lab/lab.ipynb", "assignments/lab/lab.ipynb", "autograder/lab-autograder.zip"):
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(out / name, work / name)
        student_python = f"{prefix}/student/bin/python"
        subprocess.run([student_python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(work / "extra"), "array-api-compat"], check=True)
        subprocess.run(["chmod", "-R", "a+rwX", str(work)], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": f"{work}/src:{work}/extra"}
        for notebook_path, expected in (("solutions/lab/lab.ipynb", 80), ("assignments/lab/lab.ipynb", 0)):
            cmd = [shutil.which("runuser") or "/usr/sbin/runuser", "-u", KERNEL_USER, "--", student_python, "-m", "attn_ref", "grade", str(work / notebook_path),
                   "--autograder", str(work / "autograder/lab-autograder.zip"), "--out", str(work / "graded")]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            results = json.loads((work / "graded" / "results" / "lab.json").read_text())
            assert results["score"] == expected, results["output"]
            uid = pwd.getpwnam(KERNEL_USER).pw_uid
            assert results["extra_data"]["grader"]["uid"] == uid == results["extra_data"]["kernel"]["uid"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
