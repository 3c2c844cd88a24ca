"""Hostile and broken submissions, each attack run for real in the mode where it matters.

Modes (README, "Security"):
* ``gradescope``: the zip's own setup.sh and run_autograder as root in a simulated /autograder, with
  namespaces where bubblewrap works and with them forced off (Gradescope's Docker blocks them);
* ``local``: `grade()` in this process as root (a TA as root): fresh uids, namespaces;
* ``as_user``: `attn-ref grade` run by an ordinary user (a TA's laptop), with namespaces and forced off.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value,
leaves a valid results.json, no process of any kernel uid and no file of it in shared folders.
"""

from __future__ import annotations

import copy
import ctypes
import errno
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

import nbformat
import psutil
import pytest
import yaml
from conftest import edit_notebook, hidden_characters, json_strings, max_scores, scores
from course_units import ANSWERS
from placeholders import PLACEHOLDERS

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
        results = grade(path, release[0] / "autograder" / f"{name}-autograder.zip", out_dir=tmp_path, plan=plan,
                        **{**FAST, **limits})
        assert json.loads((tmp_path / "results" / f"{name}.json").read_text()) == results
        assert psutil.Process().children(recursive=True) == [], "grading left processes behind"
        assert_sound(results)
        return results

    return run


BOTH = pytest.mark.parametrize("namespaces", ["auto", "off"])


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
    """Seen in the code: every answer scores 0. Hidden from the parser: the student environment lacks it."""
    nb = appended(notebook(release, "practice", "solution"), "import attn_ref")
    results = local(nb, "practice")
    assert results["score"] == 0 and "attn_ref" in results["output"]
    hidden = "name = ''.join(reversed('srewsna.fer_ntta'))\nkey = __import__(name, fromlist=['ANSWERS']).ANSWERS\nglobals().update(key)"
    results = local(appended(notebook(release, "practice", "blank"), hidden), "practice")
    assert results["score"] == 0
    assert any("ImportError" in e or "ModuleNotFoundError" in e for e in results["extra_data"]["cell_errors"])


@BOTH
def test_forged_replies_score_no_more_than_a_blank_notebook(release, local, namespaces):
    forger = attack("forge_replies")
    lab = every_function_calls(appended(notebook(release, "lab", "blank"), forger), "take_over_the_harness()")
    results = local(lab, "lab", namespaces)
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    practice = appended(notebook(release, "practice", "blank"), forger, """
class Trigger:
    @property
    def shape(self):
        take_over_the_harness()
        return ()
q1_lstm_sequential_steps = Trigger()
""")
    assert local(practice, "practice", namespaces)["score"] == 0


@BOTH
def test_stubs_that_only_get_shapes_devices_and_sums_right_score_nothing(release, local, namespaces):
    """Probes of a property alone (the device of meta tensors, weights that sum to 1) earn points only
    next to a probe that matched the reference and that no placeholder passes; meta probes check shapes too."""
    stubs = {**PLACEHOLDERS["zeros"],  # and weights that sum to 1
             "def softmax(": "def softmax(x, axis=-1):\n    return np.full_like(x, 1.0 / x.shape[axis])",
             "def additive_attention(": "def additive_attention(query, keys, W_q, W_k, v):\n"
                                        "    return np.zeros(keys.shape[1]), np.full(keys.shape[0], 1.0 / keys.shape[0])"}
    nb = notebook(release, "lab", "blank")
    for marker, source in stubs.items():
        nb = replaced(nb, marker, source)
    results = local(nb, "lab", namespaces)
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    assert "not counted yet" in visible_text(results)


# ---- attacks on the lab's probes ---------------------------------------------------------------------

def test_infinite_loops_in_a_task_and_in_a_cell(release, local):
    nb = with_function(release, "lab", "def additive_attention(", "def additive_attention(*args):\n    while True:\n        pass")
    nb = appended(nb, "while True:\n    pass")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c2"] == 0 and "did not finish" in next(t["output"] for t in results["tests"] if t["name"].startswith("c2"))
    assert {k: v for k, v in got.items() if k != "c2"} == {k: v for k, v in full.items() if k != "c2"}
    assert any("stopped after" in e for e in results["extra_data"]["cell_errors"])
    assert results["extra_data"]["status"] == "timeout"


IGNORES_INTERRUPTS = """def sliding_window_mask(T, window, device=None):
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass"""


def test_a_loop_that_ignores_interrupts_restarts_the_kernel(release, local):
    nb = with_function(release, "lab", "def sliding_window_mask(", IGNORES_INTERRUPTS)
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c7"] == 0 and got["c8"] == full["c8"]
    assert results["extra_data"]["kernel_restarts"] >= 1


def test_exits_in_tasks_and_cells(release, local):
    nb = with_function(release, "lab", "def causal_mask(", "def causal_mask(T, device=None):\n    import os\n    os._exit(3)")
    nb = replaced(nb, "def self_attention(", "def self_attention(x, W_q, W_k, W_v, causal=True):\n    raise SystemExit(0)")
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


@pytest.mark.parametrize("call", [
    'getattr(torch.nn.functional, "scaled_dot" + "_product_attention")(q, k, v, attn_mask=mask)',
    'getattr(torch.ops.aten, bytes.fromhex("5f7363616c65645f646f745f70726f647563745f617474656e74696f6e5f6d617468").decode())(q, k, v, attn_mask=mask)[0]',
    'getattr(torch.ops.aten, bytes.fromhex("5f7363616c65645f646f745f70726f647563745f666c6173685f617474656e74696f6e5f666f725f637075").decode())(q, k, v)[0]',
])
def test_tripwire_catches_a_forbidden_call_the_parser_cannot_see(release, local, call):
    nb = with_function(release, "lab", "def scaled_dot_product_attention(", f"""def scaled_dot_product_attention(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return {call}, weights""")
    results = local(nb, "lab")
    got, full = scores(results), max_scores(results)
    assert got["c3"] == 0  # c5 and c6 are graded with a correct c3 in its place: charged once
    assert got["c5"] == full["c5"] and got["c6"] == full["c6"]
    c3 = next(t["output"] for t in results["tests"] if t["name"].startswith("c3"))
    assert "which this task does not allow" in c3 and "scaled_dot_product" in c3
    assert "c3" in results["extra_data"]["forbidden_calls"]


def test_objects_that_pretend_to_be_answers(release, local):
    nb = with_function(release, "lab", "def causal_mask(", """class Liar(torch.Tensor):
    def __eq__(self, other):
        return True

def causal_mask(T, device=None):
    return torch.zeros(T, T, dtype=torch.bool, device=device).as_subclass(Liar)""")
    nb = replaced(nb, "def rnn_gradient_norm(", """class Number:
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
    results = local(nb, "lab", budget=15)
    assert results["execution_time"] < 30
    assert "time budget for this submission ran out" in visible_text(results)
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


# ---- hangs: the grader always ends, with results -----------------------------------------------------

@BOTH
def test_floods_fifos_and_huge_code_end_within_the_budget(release, local, namespaces):
    fifo = """
import os, sys
def _fifo_reply(*args):
    os.mkfifo(os.path.join(args[-1], "reply.json"))
def take_over():
    frame = sys._getframe(1)
    while frame is not None:
        if "call" in frame.f_globals and "_write_json" in frame.f_globals:
            frame.f_globals["_write_json"] = lambda out_dir, name, data: _fifo_reply(out_dir)
            return
        frame = frame.f_back
"""
    nb = every_function_calls(appended(notebook(release, "lab", "blank"), attack("flood"), fifo), "take_over()")
    start = time.monotonic()
    results = local(nb, "lab", namespaces, budget=60)
    assert time.monotonic() - start < 60 + 60
    assert results["score"] == 0
    huge = appended(notebook(release, "lab", "solution"), "if False:\n" + "    x = 1\n" * 600_000)  # 4.8 MB, never run
    start = time.monotonic()
    results = local(huge, "lab", namespaces, budget=60)
    assert time.monotonic() - start < 60 + 60
    assert results["score"] == 0 and "MB of code" in results["output"]


def test_the_supervisor_ends_a_grading_that_hangs_and_still_reports(tmp_path):
    from attn_ref.grade.isolation.watchdog import Job, Supervisor

    def hang(jail):
        time.sleep(3600)

    done = []
    start = time.monotonic()
    Supervisor(resolve(), margin=2).run([Job("stuck", hang, lambda reason, status, fault: {"score": 0, "reason": reason,
                                                                                     "extra_data": {"status": status}}, 3)],
                                        lambda job, results: done.append(results))
    assert time.monotonic() - start < 15
    assert done[0]["extra_data"]["status"] == "timeout" and "time budget" in done[0]["reason"]


# ---- bounds ------------------------------------------------------------------------------------------

def test_student_text_in_results_is_bounded(release, local):
    nb = every_function_calls(notebook(release, "lab", "blank"), 'raise ValueError("x" * 50_000_000)')
    nb = appended(nb, *['raise RuntimeError("y" * 10_000_000)'] * 30)
    results = local(nb, "lab")
    assert len(json.dumps(results)) < 200_000
    assert results["score"] == 0


def test_an_identity_full_of_hidden_characters_is_written_plain(release, local):
    """GRADESCOPE_ID with ESC, CR, BEL, BS, NUL, a C1 CSI, a bidi override and a lone surrogate: the results
    are written (valid UTF-8), and the "Your numbers" line and extra_data.variant show it plain."""
    from conftest import signed_in

    hostile = "\x1b[2J\rana\x07\x08\x00@uni.edu\x9b31m\u202e\ud800\n✓ FORGED (3/3)"
    results = local(signed_in(notebook(release, "practice", "solution"), hostile), "practice")
    variant = results["extra_data"]["variant"]
    assert variant["basis"] == "unverified" and variant["declared"] == "?[2J?ana???@uni.edu?31m???✓ FORGED (3/3)"
    numbers = results["tests"][0]["output"]
    assert "Graded with the numbers of ?[2J?ana" in numbers and "\n" not in numbers
    for key, text in json_strings(results):
        assert_plain(text, key, lines=key == "output")


def test_a_small_zip_holding_a_huge_notebook_is_refused_before_unpacking(release, tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("lab.ipynb", "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(1024):  # 1 GiB of spaces: about 1 MB compressed
                member.write(chunk)
    assert bomb.stat().st_size < 4 << 20
    before = psutil.Process().memory_info().rss
    results = grade(bomb, release[0] / "autograder" / "lab-autograder.zip", out_dir=tmp_path)
    assert results["score"] == 0 and "at most" in results["output"]
    assert psutil.Process().memory_info().rss - before < 200 << 20


def test_many_small_files_cannot_fill_the_disk(release, local):
    nb = appended(notebook(release, "lab", "solution"), """
import os
block = b"0" * (100 << 20)
for i in range(40):  # 4 GB in files under the per-file limit
    with open(f"fill-{i}.bin", "wb") as f:
        f.write(block)
""")
    results = local(nb, "lab")
    assert "wrote more than" in results["output"]


def test_files_deleted_while_open_still_count_against_the_disk(release, local):
    """A file unlinked while open is in no folder the guard walks, and still fills the disk."""
    nb = appended(notebook(release, "lab", "solution"), """
import os, time
block, kept = b"0" * (200 << 20), []
for i in range(7):  # 1.4 GB in files under the per-file limit, each deleted before it is written
    f = open(f"gone-{i}.bin", "wb")
    os.unlink(f"gone-{i}.bin")
    f.write(block)
    f.flush()
    kept.append(f)
time.sleep(5)  # the guard polls twice a second
""")
    results = local(nb, "lab", "off")  # the machine's /var/tmp and the work folder: no tmpfs of its own
    assert "wrote more than" in results["output"]


def test_replies_that_break_the_parser_get_a_plain_reason(release, local):
    nb = every_function_calls(appended(notebook(release, "lab", "blank"), """
import os, sys
def deep_reply():
    frame = sys._getframe(1)
    while "_write_json" not in frame.f_globals:
        frame = frame.f_back
    frame.f_globals["_write_json"] = lambda out_dir, name, data: open(os.path.join(out_dir, name), "w").write("[" * 2_000_000)
"""), "deep_reply()")
    results = local(nb, "lab")
    assert results["score"] == 0 and "internal grader error" not in json.dumps(results)
    assert "unreadable" in visible_text(results)


# ---- no expected values anywhere students look ----------------------------------------------------

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


def test_no_answer_value_in_any_released_student_notebook(release):
    out, _ = release
    for name in ("practice", "lab"):
        text = (out / "assignments" / name / f"{name}.ipynb").read_text()
        leaked = [s for s in answer_spellings() if s in text]
        assert not leaked, (name, leaked)


def test_probe_messages_never_reveal_reference_values(release, local):
    zeros = every_function_calls(notebook(release, "lab", "blank"), "return torch.zeros(3) if 'torch' in globals() else 0.0")
    nb = replaced(zeros, "def rnn_gradient_norm(", "def rnn_gradient_norm(T, factor):\n    return 0.0")
    results = local(nb, "lab")
    text = visible_text(results)
    assert "max |diff|" not in text and str(round(0.9 ** 49, 6)) not in text and "5.73e-03" not in text


# ---- Gradescope's layout, for real, as root ------------------------------------------------------------

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


@ROOT_ONLY
def test_gradescope_solution_and_blank(release, gradescope):
    submit, roots, prefix = gradescope
    results = submit("lab", notebook(release, "lab", "solution"))
    assert results["score"] == 80
    kernel_uid = results["extra_data"]["kernel"]["uid"]
    first, last = DEFAULT_UID_RANGE
    assert first <= kernel_uid <= last and results["extra_data"]["grader"]["uid"] == 0
    with pytest.raises(KeyError):
        pwd.getpwuid(kernel_uid)  # a fresh uid, no account
    assert results["extra_data"]["sandbox"]["mode"] in ("fresh uid + namespaces", "fresh uid")
    assert submit("lab", notebook(release, "lab", "blank"))["score"] == 0
    assert submit("practice", notebook(release, "practice", "solution"), namespaces="off")["score"] == 23
    source = roots["lab"] / "source"
    assert (source.stat().st_mode & 0o077) == 0 and ((source / "checks.json").stat().st_mode & 0o077) == 0
    assert (Path(prefix) / "grader").stat().st_mode & 0o077 == 0
    assert (roots["practice"] / "results" / "results.json").stat().st_mode & 0o777 == 0o600  # root's, as Gradescope reads it


@ROOT_ONLY
def test_gradescope_kernel_cannot_read_checks_or_write_results(release, gradescope):
    submit, roots, _ = gradescope
    root = roots["practice"]
    nb = appended(notebook(release, "practice", "blank"), f"""
import json
try:
    checks = json.load(open("{root}/source/checks.json"))
    for q in checks["units"]:
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
    for namespaces in ("auto", "off"):
        results = submit("practice", nb, namespaces)
        assert results["score"] == 0
        assert any("ModuleNotFoundError" in e or "ImportError" in e for e in results["extra_data"]["cell_errors"])
        assert any("hidden checks file" in f for f in results["extra_data"]["integrity_flags"])


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


@ROOT_ONLY
@pytest.mark.slow
@pytest.mark.parametrize("mode, namespaces", [("frames", "auto"), ("later", "off")])
def test_gradescope_results_hold_no_line_of_a_stand_in(release, gradescope, mode, namespaces):
    submit, _, _ = gradescope
    # each attack once, in one of the two modes (the batch test runs both attacks without namespaces)
    results = submit("lab", stand_in_thief(release, mode), namespaces)
    assert_no_stand_in_in(results)
    assert "details are withheld" in "".join(t["output"] for t in results["tests"])


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


@ROOT_ONLY
@BOTH
def test_gradescope_links_to_a_root_only_file_are_never_followed(release, gradescope, root_only_file, namespaces):
    submit, _, _ = gradescope
    swap = attack("symlink_swap", TARGET=str(root_only_file))
    lab = every_function_calls(appended(notebook(release, "lab", "blank"), swap), "swap_exchange_and_die()")
    results = submit("lab", lab, namespaces)
    assert results["score"] == 0 and "ROOT ONLY" not in json.dumps(results)
    practice = appended(notebook(release, "practice", "blank"), swap, """
class Trigger:
    @property
    def shape(self):
        swap_exchange_and_die()
q4_ratio = Trigger()
""")
    results = submit("practice", practice, namespaces)
    assert results["score"] == 0 and "ROOT ONLY" not in json.dumps(results)


@ROOT_ONLY
def test_gradescope_fork_spawners_and_leftovers_are_ended(release, gradescope):
    submit, _, _ = gradescope
    mark = f"attn-ref-left-{os.getpid()}"
    nb = appended(notebook(release, "lab", "solution"), attack("fork_spawner", MARK=mark))
    for namespaces in ("off", "auto"):
        results = submit("lab", nb, namespaces)  # also asserts no process of a kernel uid is left
        assert results["score"] == 80
        assert not Path("/dev/shm", mark).exists() and not Path("/tmp", mark).exists()


def _shm_keys() -> set[int]:
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()
    return {int(row.split()[0]) for row in rows[1:] if row.split()}


@ROOT_ONLY
def test_ipc_handed_to_root_or_outside_any_folder_is_not_left_behind(release, local):
    """Without namespaces a kernel shares the machine's IPC: a segment it hands to root (IPC_SET changes the
    owner, not the creator) is removed all the same, and it cannot make a POSIX message queue."""
    key, queue = 0x5A5A0000 + os.getpid() % 0xFFFF, f"attn-ref-left-{os.getpid()}"
    nb = appended(notebook(release, "practice", "blank"), attack("leave_ipc", KEY=str(key), QUEUE=queue))
    local(nb, "practice", "off")
    assert key not in _shm_keys()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mq_open.restype = ctypes.c_int
    assert libc.mq_open(f"/{queue}".encode(), os.O_RDONLY) == -1 and ctypes.get_errno() == errno.ENOENT


# ---- a TA as root: a batch, every submission its own uid ------------------------------------------------

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
    uids = {json.loads(p.read_text())["extra_data"]["kernel"].get("uid") for p in (graded / "results").iterdir()}
    return {row["name"]: float(row["total"]) for row in report.book.rows}, uids


@ROOT_ONLY
def test_a_batch_as_root_keeps_students_apart(release, tmp_path):
    survivor = attack("fork_spawner", MARK=f"attn-ref-batch-{os.getpid()}") + """
import glob, os, signal, time
if os.fork() == 0:
    os.setsid()
    for _ in range(600):  # for a minute: kill every process it may, read every notebook it can see
        for path in glob.glob("/proc/[0-9]*/cwd/*.ipynb"):
            try:
                open(path).read()
                open("/dev/shm/stolen", "a").write(path)
            except OSError:
                pass
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.1)
"""
    totals, uids = graded_class(release, tmp_path, {"a_hostile": appended(notebook(release, "lab", "blank"), survivor)},
                                ["b_honest", "c_honest"], "off")
    assert totals == {"a_hostile": 0, "b_honest": 80, "c_honest": 80}
    assert not Path("/dev/shm/stolen").exists() and not kernel_uid_processes(uids)
    assert (tmp_path / "graded" / "grades.csv").stat().st_mode & 0o077 == 0


@ROOT_ONLY
@BOTH
def test_folders_too_deep_to_remove_by_recursion_cost_only_their_own_submission(release, tmp_path, namespaces):
    """Cleanup removes trees without recursion; and a cleanup that fails never ends the batch."""
    totals, uids = graded_class(release, tmp_path, {"a_deep": appended(notebook(release, "lab", "blank"), attack("deep_folders"))},
                                ["b_honest"], namespaces)
    assert totals == {"a_deep": 0, "b_honest": 80}
    assert (tmp_path / "graded" / "grades.csv").exists()
    left = [p for root in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(root).glob("deep-*") if p.lstat().st_uid in uids]
    assert not left and not kernel_uid_processes(uids)


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


@ROOT_ONLY
@pytest.mark.slow
def test_a_kernel_cannot_hear_its_classmates_in_a_root_batch_without_namespaces(release, tmp_path):
    """Neither their channels, nor their kernels' logs (raw output, named on every kernel's command line), nor
    the TA's own Jupyter kernel on the shared loopback running the solution (TCP: IOPub needs no key to read)."""
    log_reader = appended(notebook(release, "lab", "blank"),
                          attack("read_logs", SECONDS="10", SOLUTION=repr("\n\n".join(solution_functions(release)))))
    tas_kernel = TasOwnKernel(solution_functions(release))
    try:
        totals, uids = graded_class(release, tmp_path, {"a_eavesdropper": eavesdropper(release), "a_log_reader": log_reader},
                                    ["b_honest", "c_honest"], "off", jobs=4)
    finally:
        tas_kernel.close()
    assert tas_kernel.runs > 10  # it spoke all along
    assert totals == {"a_eavesdropper": 0, "a_log_reader": 0, "b_honest": 80, "c_honest": 80}
    assert not kernel_uid_processes(uids)


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


@ROOT_ONLY
@pytest.mark.slow
def test_a_root_batch_from_the_command_line_keeps_the_class_in_custody(release, tmp_path, request):
    """A TA as root grades a hostile Gradescope export without namespaces, with umask 000: no kernel finds the
    output folder named in any process or reads anything of it, nothing written there is readable by others,
    no student text forges a line or hides a character anywhere, the bomb is its own error, and no kernel
    leaves a key behind."""
    from attn_ref.grade.isolation.cleanup import uids_with_keys

    out_root, _ = release
    home = Path(tempfile.mkdtemp(prefix="attn-ref-ta-home-", dir="/var/tmp"))
    home.chmod(0o755)  # a TA's home as most are: anyone may pass through, so only the grader's modes guard --out
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    out = home / "graded"
    export = hostile_export(release, tmp_path, out)
    done = subprocess.run([sys.executable, "-m", "attn_ref", "grade", str(export), "--autograder",
                           str(out_root / "autograder/lab-autograder.zip"), "--out", str(out), "--jobs", "2",
                           "--namespaces", "off", "--cell-timeout", "20", "--call-timeout", "8", "--timeout", "240"],
                          capture_output=True, text=True, timeout=900, cwd=home, preexec_fn=lambda: os.umask(0))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["submission"]: row for row in csv_rows(out / "grades.csv")}
    attacker = json.loads((out / "results/submission_1.json").read_text())
    assert rows["submission_1"]["total"] == "0", attacker["extra_data"]["cell_errors"]
    assert rows["submission_2"]["total"] == "80" and float(rows["submission_3"]["total"]) < 80
    assert rows["submission_4"]["status"].startswith("error: several notebooks")
    assert rows["submission_5"]["status"].startswith("error: the submission was not unpacked: its file")
    assert rows["submission_5"]["total"] == "0"  # the student's doing: its 0 stands
    assert_in_custody(out, done.stdout + done.stderr)
    uids = {json.loads(p.read_text())["extra_data"].get("kernel", {}).get("uid") for p in (out / "results").iterdir()}
    assert not (uids - {None}) & uids_with_keys() and not kernel_uid_processes(uids - {None})


@ROOT_ONLY
@pytest.mark.slow
def test_a_kernel_reaches_neither_classmates_nor_the_cluster_on_a_local_cluster_without_namespaces(release, tmp_path,
                                                                                                   monkeypatch):
    """As root without namespaces every kernel shares the loopback with the cluster's scheduler and workers,
    and with the TA's own Jupyter kernel."""
    monkeypatch.setenv("ATTN_REF_NAMESPACES", "off")  # the workers' graders read it
    mark = tmp_path / "a-task-ran-here"  # tmp_path is root's (0700): only a task run by a worker can write it
    reach = appended(notebook(release, "lab", "blank"), attack("reach_cluster", MARK=str(mark), SECONDS="15",
                                                                GRADER_SITE=sysconfig.get_paths()["purelib"]))
    tas_kernel = TasOwnKernel(solution_functions(release))  # kernels here start afresh (launch.py), not from an image
    home = Path(tempfile.mkdtemp(prefix="attn-ref-ta-home-", dir="/var/tmp"))
    home.chmod(0o755)  # only the grader's modes keep --out from the kernels
    try:
        totals, uids = graded_class(release, tmp_path, {"a_eavesdropper": eavesdropper(release), "c_reaches_the_cluster": reach,
                                                        "d_reads_out": out_reader(release, home / "graded")},
                                    ["b_honest"], "off", cluster="local:2", graded=home / "graded")
        assert_in_custody(home / "graded", "")
    finally:
        tas_kernel.close()
        shutil.rmtree(home, ignore_errors=True)
    assert tas_kernel.runs > 10
    assert totals == {"a_eavesdropper": 0, "b_honest": 80, "c_reaches_the_cluster": 0, "d_reads_out": 0}
    assert not mark.exists(), mark.read_text()
    assert not kernel_uid_processes(uids)


@ROOT_ONLY
@pytest.mark.slow
def test_a_batch_holds_no_line_of_a_stand_in(release, tmp_path):
    graded_class(release, tmp_path, {"a_frames": stand_in_thief(release, "frames"), "b_later": stand_in_thief(release, "later")},
                 [], "off", jobs=2)
    for path in (tmp_path / "graded" / "results").glob("*.json"):
        assert_no_stand_in_in(json.loads(path.read_text()))
    for path in (tmp_path / "graded").rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".html"):
            text = path.read_text(errors="replace")
            assert not [line for line in STAND_IN_LINES if line in text], path


@ROOT_ONLY
@pytest.mark.slow
@pytest.mark.parametrize("bounds", ["cgroups", "polled"])
def test_neighbours_cannot_starve_or_kill_an_honest_kernel(release, tmp_path, bounds, monkeypatch):
    """Beside a kernel whose processes together pass its memory bound and one that keeps 8 processes busy,
    an honest kernel scores what it scores alone, the grader survives, and the hog's row says why it stopped."""
    from dataclasses import replace

    elsewhere = Path(tempfile.gettempdir())
    own_tmp = Path(tempfile.mkdtemp(prefix="nb-", dir="/tmp"))  # short: the kernels' socket paths live below it
    own_tmp.chmod(0o711)  # the kernels' uids pass through to their folders, as through /tmp
    monkeypatch.setenv("TMPDIR", str(own_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))  # the jails' bases: this test's alone

    plan = resolve(namespaces="auto")
    if bounds == "cgroups" and "memory" not in plan.cgroups:
        pytest.skip("no cgroups can be made here")
    plan = replace(plan, cgroups=plan.cgroups if bounds == "cgroups" else (),
                   limits=replace(plan.limits, kernel_memory_bytes=3 << 29))  # 1.5 GB for a kernel in all
    solution = notebook(release, "lab", "solution")
    hostile = {"a_cpu_hog": appended(notebook(release, "lab", "blank"), CPU_HOG),
               "c_memory_hog": appended(solution, MEMORY_HOG)}
    cgroups_before = kernel_cgroups()
    totals, uids = graded_class(release, tmp_path, hostile, ["b_honest"], "auto", jobs=3, plan=plan)  # all at once
    assert totals["b_honest"] == 80 and totals["a_cpu_hog"] == 0
    rows = {row["name"]: row for row in csv_rows(tmp_path / "graded" / "grades.csv")}
    why = "its processes used more than 1.5 GB of memory together"
    assert rows["c_memory_hog"]["status"] == f"stopped: {why}", rows["c_memory_hog"]
    hog = json.loads((tmp_path / "graded" / "results" / "c_memory_hog.json").read_text())
    assert f"The kernel was stopped: {why}." in hog["output"]
    assert hog["extra_data"]["sandbox"]["kernel_bounds"] == ("polled" if bounds == "polled" else f"cgroups ({', '.join(plan.cgroups)})")
    assert rows["b_honest"]["status"] == "ok" and rows["a_cpu_hog"]["status"] == "ok"
    assert not kernel_uid_processes(uids - {None}) and not left_behind(kernel_cgroups() - cgroups_before, elsewhere)
    assert not list(own_tmp.iterdir())  # every base removed
    own_tmp.rmdir()


def test_a_timeout_in_a_batch_is_graded_again_alone_before_it_is_recorded(release, tmp_path, monkeypatch):
    from attn_ref.grade.classroom.batch import grade_batch
    from attn_ref.grade.isolation import watchdog

    starts = []  # (submission, what else was running then)
    original = watchdog.Supervisor._start

    def start(self, job):
        starts.append((job.key, sorted(r.job.key for r in self.running.values())))
        original(self, job)

    monkeypatch.setattr(watchdog.Supervisor, "_start", start)
    folder = tmp_path / "class"
    folder.mkdir()
    blank = notebook(release, "practice", "blank")
    nbformat.write(appended(blank, "while True:\n    pass"), str(folder / "a_loop.ipynb"))
    nbformat.write(blank, str(folder / "b_blank.ipynb"))
    report = grade_batch(folder, release[0] / "autograder/practice-autograder.zip", tmp_path / "graded", jobs=2,
                         progress=False, cell_timeout=10, call_timeout=10, notebook_timeout=40)
    assert [key for key, _ in starts] == ["a_loop", "b_blank", "a_loop"] and starts[2][1] == []
    rows = {row["name"]: row for row in report.book.rows}
    assert rows["a_loop"]["status"] == "timeout (also when graded again alone)" and rows["b_blank"]["status"] == "ok"
    results = json.loads((tmp_path / "graded" / "results" / "a_loop.json").read_text())
    assert results["extra_data"]["graded_alone"] and "graded again alone, and ran out of time again" in results["output"]


# ---- a TA as an ordinary user --------------------------------------------------------------------------

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


@ROOT_ONLY
def test_a_ta_as_user_kernel_reaches_nothing_of_the_grader(release, as_user):
    work, run = as_user
    secret = f"ta-token-{os.getpid()}"
    reach = attack("reach_grader", SECRET_ENV=secret, GRADER_PATHS=f"{work}/src:{work}/extra",
                   CHECKS_PATHS=f"{work}/autograder/practice-autograder.zip")
    nbformat.write(appended(notebook(release, "practice", "blank"), reach), str(work / "attack.ipynb"))
    shutil.chown(work / "attack.ipynb", TA_USER)
    done = run(["grade", str(work / "attack.ipynb"), "--autograder", str(work / "autograder/practice-autograder.zip"),
                "--out", str(work / "graded")], secret=secret)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((work / "graded/results/attack.json").read_text())
    assert results["extra_data"]["sandbox"]["mode"] == "namespaces"
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    assert_in_custody(work / "graded", done.stdout + done.stderr)  # the TA's umask: the modes are set, not inherited


@ROOT_ONLY
@pytest.mark.slow
def test_a_ta_as_user_kernel_cannot_hear_its_classmates(release, as_user):
    work, run = as_user
    folder = class_folder(release, work / "eavesdropped", {"a_eavesdropper": eavesdropper(release)}, ["b_honest", "c_honest"])
    subprocess.run(["chown", "-R", TA_USER, str(folder)], check=True)
    done = run(["grade", str(folder), "--autograder", str(work / "autograder/lab-autograder.zip"), "--out",
                str(work / "graded-eavesdropped"), "--jobs", "3"])
    assert done.returncode == 0, done.stderr[-2000:]
    results = {p.stem: json.loads(p.read_text()) for p in (work / "graded-eavesdropped/results").glob("*.json")}
    assert {name: r["score"] for name, r in results.items()} == {"a_eavesdropper": 0, "b_honest": 80, "c_honest": 80}
    assert {r["extra_data"]["sandbox"]["mode"] for r in results.values()} == {"namespaces"}
    assert "kernels started from one kernel image" in done.stdout  # as a user, inside namespaces: the image serves


@ROOT_ONLY
def test_a_ta_without_namespaces_is_told_it_is_unsandboxed(release, as_user):
    work, run = as_user
    done = run(["grade", str(work / "solutions/lab/lab.ipynb"), "--autograder", str(work / "autograder/lab-autograder.zip"),
                "--out", str(work / "graded")], namespaces="off")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "unsandboxed" in done.stdout + done.stderr
    results = json.loads((work / "graded/results/lab.json").read_text())
    assert results["score"] == 80 and results["extra_data"]["sandbox"]["unsandboxed"] is True
    assert results["extra_data"]["kernel"]["uid"] == pwd.getpwnam(TA_USER).pw_uid


@ROOT_ONLY
def test_a_kernel_that_kills_its_grader_costs_only_its_own_submission(release, as_user):
    work, run = as_user
    folder = work / "class"
    folder.mkdir()
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"
    nbformat.write(appended(notebook(release, "lab", "solution"), killer), str(folder / "a_killer.ipynb"))
    for name in ("b_honest", "c_honest"):
        shutil.copy(work / "solutions/lab/lab.ipynb", folder / f"{name}.ipynb")
    subprocess.run(["chown", "-R", TA_USER, str(folder)], check=True)
    done = run(["grade", str(folder), "--autograder", str(work / "autograder/lab-autograder.zip"), "--out",
                str(work / "graded-class"), "--jobs", "2"], namespaces="off")
    assert done.returncode == 0, done.stderr[-2000:]
    # unsandboxed, a kernel would be the image's own user: every kernel starts afresh, and the summary says why
    assert "kernels started afresh for each submission: no kernel image (no sandbox" in done.stdout
    rows = {r.split(",")[0]: r for r in (work / "graded-class/grades.csv").read_text().splitlines()[1:]}
    assert ",80," in rows["b_honest"] and ",80," in rows["c_honest"]
    # its grading process died: from outside, that is no grade (an empty total that says why), never a made-up 0
    assert "not graded: the grader failed" in rows["a_killer"] and ",80," not in rows["a_killer"]


@ROOT_ONLY
@pytest.mark.slow
def test_a_ta_as_user_kernel_from_the_image_is_still_bounded_in_memory(release, as_user):
    """As a user there is no cgroup: the supervisor sums the memory of the kernel's processes. A kernel forked
    from the image is the image's child, not the grading process's: it is found in its sandbox's PID
    namespace, so its memory is still counted and a hog is stopped."""
    work, run = as_user
    folder = work / "hogs"
    folder.mkdir()
    hog = MEMORY_HOG.replace("range(8)", "range(14)").replace("8 x 256 MB", "14 x 256 MB")  # past the default 3 GB
    nbformat.write(appended(notebook(release, "lab", "solution"), hog), str(folder / "a_hog.ipynb"))
    shutil.copy(work / "solutions/lab/lab.ipynb", folder / "b_honest.ipynb")
    subprocess.run(["chown", "-R", TA_USER, str(folder)], check=True)
    done = run(["grade", str(folder), "--autograder", str(work / "autograder/lab-autograder.zip"), "--out",
                str(work / "graded-hogs"), "--jobs", "2"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kernels started from one kernel image" in done.stdout
    rows = {r.split(",")[0]: r for r in (work / "graded-hogs/grades.csv").read_text().splitlines()[1:]}
    assert "stopped: its processes used more than 3 GB of memory together" in rows["a_hog"]
    assert rows["b_honest"].endswith(",80,ok")
