"""A release's zips, and Gradescope's /autograder simulated: the zip unpacked, run_autograder run as setup.sh left it."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ZIP = {name: Path("autograder") / f"{name}-autograder.zip" for name in ("practice", "lab")}


def zip_of(out: Path, name: str) -> Path:
    """The autograder zip of assignment ``name`` in the release built under ``out``."""
    return out / ZIP[name]


def autograder_layout(tmp_path: Path, zip_path: Path) -> Path:
    root = tmp_path / "autograder"
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    return root


def run_autograder(root: Path) -> dict:
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, PYTHONPATH="")
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads((root / "results" / "results.json").read_text())
