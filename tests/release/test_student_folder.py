"""A student's folder works alone: a fresh venv made from its requirements.txt runs the notebook, and the
first cell installs otter-grader where it is missing (from a local wheel folder here: the cell's own pip
runs with no index)."""

import json
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from attn_ref.release.notebooks import KERNELSPEC


def _kernelspec(folder, python) -> str:
    spec = folder / "kernels" / "student-folder"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                                  "display_name": "student folder", "language": "python"}))
    return "student-folder"


@pytest.mark.slow
def test_a_venv_from_the_student_folder_runs_the_lab_and_installs_otter_itself(release, tmp_path, monkeypatch):
    out, _ = release
    folder = out / "assignments" / "lab"
    wanted = [line for line in (folder / "requirements.txt").read_text().splitlines() if not line.startswith("otter-grader==")]
    (tmp_path / "without-otter.txt").write_text("\n".join(wanted) + "\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run(pip + ["-r", str(tmp_path / "without-otter.txt")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert subprocess.run([str(python), "-c", "import otter"], capture_output=True).returncode != 0  # not yet
    wheels = tmp_path / "wheels"
    done = subprocess.run([str(python), "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), "otter-grader==7.0.0"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]

    # The solution's answers pasted into the student's notebook: its own cells, run in the fresh venv.
    solution = nbformat.read(str(out / "solutions" / "lab" / "lab.ipynb"), as_version=4)
    work = tmp_path / "work"
    work.mkdir()
    for file in folder.iterdir():
        (work / file.name).write_bytes(file.read_bytes())
    nbformat.write(solution, str(work / "lab.ipynb"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    kernel = _kernelspec(tmp_path / "jupyter", python)
    nb = nbformat.read(str(work / "lab.ipynb"), as_version=4)
    nb.metadata["kernelspec"] = dict(KERNELSPEC, name=kernel)
    NotebookClient(nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(work)}}).execute()

    first = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "installing otter-grader==7.0.0" in first
    assert subprocess.run([str(python), "-c", "import otter"], capture_output=True).returncode == 0
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    assert len(checks) == 8
    for cell in checks:
        said = json.dumps(cell.outputs)
        assert "All test cases passed" in said, (cell.source, said[:600])
