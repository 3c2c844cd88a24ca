"""Find and read the one notebook of a submission: a .ipynb, a grader.export() zip, or a folder.

Only the notebook is taken; every other file (.OTTER_LOG included) is ignored.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from pathlib import Path

import nbformat

from .kernel import KERNEL_NAME


class SubmissionError(Exception):
    """A submission that cannot be graded; the message is shown to the student and the TA."""


def _read(data: bytes, where: str) -> nbformat.NotebookNode:
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:  # NotJSONError, UnicodeDecodeError, validation failures
        raise SubmissionError(f"{where} is not a readable Jupyter notebook ({type(err).__name__})") from None
    if not isinstance(nb.get("cells"), list):
        raise SubmissionError(f"{where} has no cells")
    return nb


def _one(names: list[str], where: str) -> str:
    if not names:
        raise SubmissionError(f"no notebook (.ipynb) found in {where}")
    if len(names) > 1:
        raise SubmissionError(f"several notebooks in {where}: {', '.join(sorted(names))}; submit exactly one")
    return names[0]


def _is_notebook(name: str) -> bool:
    parts = Path(name).parts
    return name.endswith(".ipynb") and not any(p.startswith((".", "__MACOSX")) for p in parts)


def _from_zip(data: bytes, where: str) -> tuple[nbformat.NotebookNode, str]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise SubmissionError(f"{where} is not a valid zip file") from None
    name = _one([n for n in archive.namelist() if _is_notebook(n)], where)
    return _read(archive.read(name), f"{where}:{name}"), Path(name).name


def load(path: str | Path) -> tuple[nbformat.NotebookNode, str]:
    """(notebook, file name) of a submission; raises SubmissionError with a plain reason."""
    path = Path(path)
    if path.is_dir():
        notebooks = [p for p in path.rglob("*.ipynb") if _is_notebook(str(p.relative_to(path)))]
        zips = [p for p in path.rglob("*.zip") if not p.name.startswith(".")]
        if not notebooks and len(zips) == 1:
            return _from_zip(zips[0].read_bytes(), zips[0].name)
        found = _one([str(p.relative_to(path)) for p in notebooks], f"the folder {path.name}")
        return _read((path / found).read_bytes(), found), Path(found).name
    if not path.exists():
        raise SubmissionError(f"{path} does not exist")
    if path.suffix == ".zip":
        return _from_zip(path.read_bytes(), path.name)
    return _read(path.read_bytes(), path.name), path.name


def check_assignment(nb: nbformat.NotebookNode, expected: str) -> None:
    """The notebook must belong to this assignment (otter writes the name into its metadata)."""
    name = nb.metadata.get("otter", {}).get("assignment_name")
    if name is None:
        raise SubmissionError(f"this notebook has no assignment name; download the {expected!r} notebook again and copy your answers in")
    if name != expected:
        raise SubmissionError(f"this notebook is for the assignment {name!r}, not {expected!r}")
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel not in (None, KERNEL_NAME):
        warnings.warn(f"the notebook names kernel {kernel!r}; grading uses {KERNEL_NAME!r}", stacklevel=2)
