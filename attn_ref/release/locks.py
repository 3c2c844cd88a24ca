"""The exact versions each environment installs, resolved once for every platform (`make lock`).

Two environments, two files under ``locks/``:

* ``student.txt``: what graded kernels run in, and what students install from their folder's
  requirements.txt (numpy, torch, otter-grader, matplotlib, ipykernel and everything they need);
* ``grader.txt``: the grader's own environment on Gradescope (no torch, never student code).

Each is a universal lock (``uv pip compile --universal --python-version 3.10``): one file whose pins hold on
Gradescope's image (Ubuntu 22.04, Python 3.10) and on students' Linux, macOS and Windows machines; where a
newer Python needs another release, the file says so with a marker. The lines that PyPI's torch needs on
Linux alone (its CUDA stack: nvidia-*, cuda-*, triton) are left out: torch's own metadata pins them exactly,
so pip installs the same versions for students on Linux, and the grader, which takes torch's CPU build from
PyTorch's index, installs none of them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from .errors import ReleaseError
from .paths import repo_root

PYTHON_FLOOR = "3.10"  # Gradescope's Ubuntu 22.04 image
LOCK_DIR = "locks"
# Which of the project's requirements (pyproject.toml) each environment gets.
PACKAGES = {
    "student": {"numpy", "torch", "ipykernel", "otter-grader", "matplotlib"},
    "grader": {"numpy", "array-api-compat", "nbformat", "jupyter-client", "ipython", "psutil"},
}
LINUX_ONLY = re.compile(r"sys_platform == 'linux'")


class LockError(ReleaseError):
    """A lock is missing or cannot be made; the message says what to run."""


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def ranges(environment: str) -> str:
    """The project's own requirement ranges for one environment (one source: the package metadata)."""
    pins = []
    for requirement in metadata.requires("attn-ref") or []:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        if "extra ==" not in requirement and normalized(name) in PACKAGES[environment]:
            pins.append(requirement)
    return "\n".join(sorted(pins)) + "\n"


def lock_path(environment: str, root: Path | None = None) -> Path:
    return (root or repo_root()) / LOCK_DIR / f"{environment}.txt"


def locked(environment: str, root: Path | None = None) -> str:
    """The lock of one environment, as pip reads it; LockError naming the file and `make lock` when it is
    absent or no longer satisfies pyproject.toml (a range edited since the lock was made)."""
    path = lock_path(environment, root)
    if not path.is_file():
        raise LockError(f"{path} is missing: run `make lock` (it resolves the requirements of pyproject.toml with uv)")
    text = path.read_text()
    stale = outside_ranges(text, ranges(environment))
    if stale:
        raise LockError(f"{path} is older than pyproject.toml ({'; '.join(stale)}): run `make lock`")
    return text


def outside_ranges(lock: str, wanted: str) -> list[str]:
    """Each requirement of ``wanted`` that the lock does not pin, or pins outside its range."""
    locked_versions: dict[str, list[str]] = {}
    for name, version, _ in pins(lock):
        locked_versions.setdefault(name, []).append(version)
    problems = []
    for line in wanted.splitlines():
        if not line.strip():
            continue
        requirement = Requirement(line)
        versions = locked_versions.get(normalized(requirement.name), [])
        if not versions:
            problems.append(f"{requirement.name} is not pinned")
        problems += [f"{requirement.name}=={v} is outside {requirement.specifier}" for v in versions
                     if not requirement.specifier.contains(v, prereleases=True)]
    return problems


def pins(text: str) -> list[tuple[str, str, str]]:
    """(normalized name, version, marker or '') for every pin of a lock."""
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^\s;]+)\s*(?:;\s*(.+))?$", line)
        if match:
            found.append((normalized(match.group(1)), match.group(2), (match.group(3) or "").strip()))
    return found


def _via(annotated: str) -> dict[str, set[str]]:
    """Each package of uv's annotated output and the packages it is required by."""
    via: dict[str, set[str]] = {}
    current = None
    for line in annotated.splitlines():
        if line and not line.startswith(" "):
            current = normalized(re.match(r"[A-Za-z0-9_.-]+", line).group(0))
            via[current] = set()
        elif current and (match := re.match(r"\s+#\s+(?:via\s+)?([A-Za-z0-9_.-]+)\s*$", line)):
            if match.group(1) != "via":
                via[current].add(normalized(match.group(1)))
    return via


def torch_linux_stack(annotated: str) -> set[str]:
    """The packages only PyPI's torch needs, and only on Linux (directly or through one another)."""
    via = _via(annotated)
    markers = {name: marker for name, _, marker in pins(annotated)}
    stack: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, parents in via.items():
            if name not in stack and parents and parents <= {"torch"} | stack and LINUX_ONLY.search(markers.get(name, "")):
                stack.add(name)
                grew = True
    return stack


def compile_lock(environment: str) -> str:
    """Resolve one environment with uv into the text of its lock."""
    uv = shutil.which("uv")
    if uv is None:
        raise LockError("uv is not installed: `pip install uv` (make lock installs it into .venv)")
    done = subprocess.run([uv, "pip", "compile", "--universal", "--python-version", PYTHON_FLOOR, "--no-header", "-"],
                          input=ranges(environment), capture_output=True, text=True)
    if done.returncode != 0:
        raise LockError(f"uv could not resolve the {environment} environment:\n{done.stderr[-2000:]}")
    stack = torch_linux_stack(done.stdout)
    lines = [f"{name}=={version}" + (f" ; {marker}" if marker else "")
             for name, version, marker in pins(done.stdout) if name not in stack]
    header = [f"# The {environment} environment, locked for Python >= {PYTHON_FLOOR} on Linux, macOS and Windows.",
              "# Made by `make lock` (uv pip compile --universal) from pyproject.toml; do not edit by hand.",
              *(textwrap.wrap("torch's CUDA stack on Linux, left to torch's own exact pins: " + ", ".join(sorted(stack)),
                             110, initial_indent="# ", subsequent_indent="#   ") if stack else ())]
    return "\n".join(header + lines) + "\n"


def write_locks(root: Path | None = None) -> list[Path]:
    written = []
    for environment in PACKAGES:
        path = lock_path(environment, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(compile_lock(environment))
        written.append(path)
    return written
