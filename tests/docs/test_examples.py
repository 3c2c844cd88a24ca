"""The example class a TA tries the whole flow on (examples/): the committed files are what
examples/make_examples.py makes from this release, byte for byte, so they never drift from the assignment."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from doc_blocks import REPO


def test_the_committed_example_class_is_what_the_script_makes_from_this_release(release, tmp_path):
    out, _ = release
    done = subprocess.run([sys.executable, str(REPO / "examples/make_examples.py"), "--release", str(out), "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in ("practice-export.zip", "canvas_gradebook.csv"):
        assert (tmp_path / name).read_bytes() == (REPO / "examples" / name).read_bytes(), (
            f"examples/{name} is stale: run `python examples/make_examples.py` after `make release` and commit it")


def test_the_example_export_is_laid_out_as_gradescope_lays_it_out():
    """One top folder, its metadata beside a folder per submission: what unzipping Gradescope's zip gives."""
    with zipfile.ZipFile(REPO / "examples/practice-export.zip") as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names}
    assert len(tops) == 1 and tops.pop().startswith("assignment_") and all(n.count("/") in (1, 2) for n in names)
    assert sum(n.endswith("/submission_metadata.yml") for n in names) == 1
    assert sum(n.endswith(".ipynb") for n in names) == 3
