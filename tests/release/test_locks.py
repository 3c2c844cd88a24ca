"""The locked environments: exact pins for every platform, kept in step with pyproject.toml."""

import json
import subprocess
import zipfile

import pytest

from attn_ref.grade.isolation.sandbox import default_student_python
from attn_ref.release.locks import LockError, locked, outside_ranges, pins, ranges, torch_linux_stack
from attn_ref.release.versions import GRADESCOPE, applying, differences

# uv's annotated output, as `uv pip compile --universal` writes it (trimmed)
ANNOTATED = """\
filelock==4.1.0 ; python_full_version < '3.11'
    # via torch
jinja2==3.1.6
    # via
    #   torch
    #   nbconvert
cuda-bindings==13.4.4 ; sys_platform == 'linux'
    # via torch
cuda-pathfinder==1.8.3 ; sys_platform == 'linux'
    # via cuda-bindings
nvidia-cublas==13.1.1.3 ; sys_platform == 'linux'
    # via torch
pexpect==4.9.0 ; sys_platform != 'win32'
    # via ipython
triton==3.7.1 ; python_full_version < '3.15' and sys_platform == 'linux'
    # via torch
torch==2.13.0
    # via -r -
"""


def test_torch_linux_stack_is_what_only_torch_needs_and_only_on_linux():
    assert torch_linux_stack(ANNOTATED) == {"cuda-bindings", "cuda-pathfinder", "nvidia-cublas", "triton"}


def test_pins_read_names_versions_and_markers():
    assert ("filelock", "4.1.0", "python_full_version < '3.11'") in pins(ANNOTATED)
    assert ("otter-grader", "7.0.0", "") in pins("otter_grader[grading]==7.0.0  # a comment")


def test_a_lock_outside_pyprojects_ranges_is_named():
    assert outside_ranges("numpy==1.20.0\n", "numpy>=1.24\ntorch<2.14,>=2.3\n") == [
        "numpy==1.20.0 is outside >=1.24", "torch is not pinned"]
    assert outside_ranges("numpy==2.2.6 ; python_full_version < '3.11'\nnumpy==2.4.6\ntorch==2.13.0\n",
                          "numpy>=1.24\ntorch<2.14,>=2.3\n") == []


def test_a_missing_or_stale_lock_says_to_run_make_lock(tmp_path):
    with pytest.raises(LockError, match=r"locks/student\.txt is missing: run `make lock`"):
        locked("student", tmp_path)
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "student.txt").write_text("numpy==1.0\n")
    with pytest.raises(LockError, match=r"older than pyproject\.toml \(.*numpy==1\.0 is outside >=1\.24; .*\): run `make lock`"):
        locked("student", tmp_path)


@pytest.mark.parametrize("environment", ["student", "grader"])
def test_the_repos_locks_pin_everything_exactly_and_satisfy_pyproject(environment):
    text = locked(environment)  # raises when stale
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines and len(lines) == len(pins(text)), [line for line in lines if "==" not in line]
    assert not outside_ranges(text, ranges(environment))


def test_the_student_lock_has_everything_the_cpu_torch_needs():
    """The grader's kernels take torch's CPU build, whose requirements must all be in the lock."""
    python = default_student_python()
    assert python is not None, "the students' environment (make student-env) is missing"
    script = ("import importlib.metadata as m, json; from packaging.requirements import Requirement as R; "
              "print(json.dumps([R(r).name for r in m.requires('torch') if 'extra ==' not in r]))")
    needed = json.loads(subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True).stdout)
    locked_names = {name for name, _, _ in pins(locked("student"))}
    assert needed and {n.lower().replace("_", "-") for n in needed} <= locked_names


def test_the_student_folder_and_the_zip_carry_the_lock(release):
    out, _ = release
    for name in ("practice", "lab"):
        students = (out / "assignments" / name / "requirements.txt").read_text()
        assert students.startswith("# The environment this assignment is graded in")
        assert students.endswith(locked("student"))
        with zipfile.ZipFile(out / "autograder" / f"{name}-autograder.zip") as archive:
            assert archive.read("requirements-student.txt").decode() == locked("student")


LOCK = """\
numpy==2.2.6 ; python_full_version < '3.11'
numpy==2.4.6 ; python_full_version == '3.11.*'
pexpect==4.9.0 ; sys_platform != 'win32'
torch==2.13.0
"""


def test_the_versions_gradescope_takes_from_a_universal_lock():
    assert applying(LOCK, GRADESCOPE) == {"numpy": "2.2.6", "pexpect": "4.9.0", "torch": "2.13.0"}
    windows = dict(GRADESCOPE, python_full_version="3.11.7", python_version="3.11", sys_platform="win32")
    assert applying(LOCK, windows) == {"numpy": "2.4.6", "torch": "2.13.0"}


def test_versions_other_than_the_locks_are_named_and_the_cpu_build_is_the_locked_torch():
    installed = {"numpy": "2.2.6", "pexpect": "4.8.0", "torch": "2.13.0+cpu"}
    assert differences(LOCK, GRADESCOPE, installed) == ["pexpect 4.8.0 (lock: 4.9.0)"]
    assert differences(LOCK, GRADESCOPE, {"torch": "2.13.0"}) == ["numpy missing (lock: 2.2.6)", "pexpect missing (lock: 4.9.0)"]
