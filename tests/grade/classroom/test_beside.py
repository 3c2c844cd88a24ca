"""beside(): the gradebook's plots drawn in a forked child while the report is written; at once where this process
has another thread (a fork copies one thread: a lock another holds would stay held); a child that failed says so.
Each case runs in a fresh interpreter: a test process (xdist's worker) has threads of its own."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, os, sys, threading
from attn_ref.grade.classroom.beside import beside
folder, case = sys.argv[1], sys.argv[2]
def work():
    with open(os.path.join(folder, "ran"), "w") as f:
        json.dump({"pid": os.getpid(), "name": open("/proc/self/comm").read().strip()}, f)
    if case == "fails":
        raise RuntimeError("no plot")
if case == "threaded":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
wait = beside(work, "attn-ref plots")
print(json.dumps({"me": os.getpid(), "ran_through": wait()}))
"""


def _beside(tmp_path, case: str) -> tuple[dict, dict]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), case], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), json.loads((tmp_path / "ran").read_text())


def test_the_work_runs_in_a_named_child_and_its_files_stay(tmp_path):
    said, ran = _beside(tmp_path, "works")
    assert said["ran_through"] is True and ran["pid"] != said["me"] and ran["name"] == "attn-ref plots"


def test_a_child_that_failed_says_so(tmp_path):
    said, ran = _beside(tmp_path, "fails")
    assert said["ran_through"] is False and ran["pid"] != said["me"]


def test_with_another_thread_the_work_runs_here_at_once(tmp_path):
    said, ran = _beside(tmp_path, "threaded")
    assert said["ran_through"] is True and ran["pid"] == said["me"]
