"""otter's own zip (attn-ref build --otter-zip): made by otter assign, graded by `otter run`, no reference inside."""

import json
import os
import signal
import subprocess
import sys
import zipfile

import pytest
from course_units import COURSE, assignment

from attn_ref.grade.scoring.autograder import load_autograder
from attn_ref.release.build import ZIP_DATE, build
from attn_ref.release.otter_zip import kept, otter_zip


@pytest.fixture(scope="module")
def with_otter(tmp_path_factory):
    out = tmp_path_factory.mktemp("otter-release")
    build(out, COURSE, with_otter_zip=True)
    return out


def _otter_run(zip_path, notebook, out) -> dict:
    """otter's output goes to a file, not a pipe: a kernel of otter's that outlives it (holding the pipe open)
    cannot keep this waiting; whatever otter left running is ended with its session."""
    out.mkdir()
    log = out.parent / f"{out.name}-otter.log"
    with open(log, "wb") as sink:
        otter = subprocess.Popen([sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(out), str(notebook)],
                                 stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = otter.wait(timeout=600)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            try:
                os.killpg(otter.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            otter.wait()
    said = log.read_bytes().decode(errors="replace")[-3000:]
    if code is None:  # say where otter stood, not only that it hung
        pytest.fail(f"otter run did not finish in 600 s on {notebook.name}; its output so far:\n{said}")
    assert code == 0, said
    return json.loads((out / "results.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name,total", [("practice", 23), ("lab", 80)])
def test_otter_run_grades_the_solution_full_and_the_blank_notebook_0(with_otter, tmp_path, name, total):
    zip_path = with_otter / "autograder" / f"{name}-otter-autograder.zip"
    solution = _otter_run(zip_path, with_otter / "solutions" / name / f"{name}.ipynb", tmp_path / "solution")
    blank = _otter_run(zip_path, with_otter / "assignments" / name / f"{name}.ipynb", tmp_path / "blank")
    graded = [t for t in solution["tests"] if t.get("max_score")]
    assert sum(t["score"] for t in graded) == sum(t["max_score"] for t in graded) == total
    assert sum(t.get("score") or 0 for t in blank["tests"]) == 0


def test_otters_zip_holds_tests_with_literals_and_no_reference(with_otter):
    with zipfile.ZipFile(with_otter / "autograder" / "lab-otter-autograder.zip") as archive:
        names = archive.namelist()
        tests = {n: archive.read(n).decode() for n in names if n.startswith("tests/")}
        assert all(archive.getinfo(n).date_time == ZIP_DATE for n in names)
    assert not any("attn_ref" in n or n.startswith("references/") for n in names)
    assert sorted(tests) == [f"tests/c{i}.py" for i in range(1, 9)]
    assert not any("import attn_ref" in source or "from attn_ref" in source for source in tests.values())
    assert "hidden=True" in tests["tests/c3.py"] and "b64decode" in tests["tests/c3.py"]


def test_otters_zip_keeps_the_cpu_comparisons_only(with_otter):
    lab = load_autograder(with_otter / "autograder" / "lab-autograder.zip")
    c3 = lab.checks.unit("c3")
    names = [p.name for p in c3.probes if kept(p)]
    assert "no mask: B, H, T_q ≠ T_k, d_k ≠ d_v drawn per grading" in names
    assert not any("meta" in n or "precision" in n or "unchanged" in n for n in names)


def test_otters_zip_is_deterministic(with_otter, tmp_path):
    hardened = with_otter / "autograder" / "practice-autograder.zip"
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    one = otter_zip(assignment("practice"), hardened, first, ZIP_DATE)
    two = otter_zip(assignment("practice"), hardened, second, ZIP_DATE)
    assert one.read_bytes() == two.read_bytes() == (with_otter / "autograder" / one.name).read_bytes()
