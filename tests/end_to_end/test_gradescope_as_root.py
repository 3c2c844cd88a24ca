"""Gradescope's layout for real, as root: the zip's setup.sh and run_autograder, with namespaces and without.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import pwd
from pathlib import Path

import pytest
from hostile import (
    BOTH,
    ROOT_ONLY,
    _shm_keys,
    appended,
    assert_no_stand_in_in,
    attack,
    every_function_calls,
    notebook,
    stand_in_thief,
)

from attn_ref.grade.isolation.cleanup import DEFAULT_UID_RANGE


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


@ROOT_ONLY
@pytest.mark.slow
@pytest.mark.parametrize("mode, namespaces", [("frames", "auto"), ("later", "off")])
def test_gradescope_results_hold_no_line_of_a_stand_in(release, gradescope, mode, namespaces):
    submit, _, _ = gradescope
    # each attack once, in one of the two modes (the batch test runs both attacks without namespaces)
    results = submit("lab", stand_in_thief(release, mode), namespaces)
    assert_no_stand_in_in(results)
    assert "details are withheld" in "".join(t["output"] for t in results["tests"])


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
