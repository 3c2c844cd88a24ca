"""autograder/<name>-versions.txt: what Gradescope will install, and what `attn-ref check` graded with.

The locks (locks/*.txt) are universal: which pin applies depends on the Python and the platform. This
file spells out the pins Gradescope's image (Ubuntu 22.04, Python 3.10, x86_64) takes from them, then the
versions the check's own kernels ran, each compared with the pin the lock gives that interpreter.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from packaging.markers import Marker

from .locks import locked, normalized, pins

GRADESCOPE = {  # packaging's marker environment of Gradescope's image
    "implementation_name": "cpython", "implementation_version": "3.10.12", "os_name": "posix",
    "platform_machine": "x86_64", "platform_python_implementation": "CPython", "platform_release": "",
    "platform_system": "Linux", "platform_version": "", "python_full_version": "3.10.12", "python_version": "3.10",
    "sys_platform": "linux",
}
_KERNEL_SCRIPT = """\
import importlib.metadata as m, json
from packaging.markers import default_environment
print(json.dumps({"environment": default_environment(),
                  "versions": {d.metadata["Name"]: d.version for d in m.distributions() if d.metadata["Name"]}}))
"""


def applying(lock: str, environment: dict) -> dict[str, str]:
    """The lock's pins for one interpreter: {normalized name: version}."""
    return {name: version for name, version, marker in pins(lock) if not marker or Marker(marker).evaluate(environment)}


def kernel_versions(python: str) -> tuple[dict, dict[str, str]]:
    """(marker environment, {normalized name: version}) of the kernels' interpreter."""
    done = subprocess.run([python, "-I", "-c", _KERNEL_SCRIPT], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"could not list the packages of {python}: {done.stderr[-400:]}")
    found = json.loads(done.stdout)
    return found["environment"], {normalized(name): version for name, version in found["versions"].items()}


def _local_label_free(version: str) -> str:
    return version.split("+", 1)[0]  # 2.13.0+cpu is the lock's 2.13.0 from PyTorch's CPU index


def differences(lock: str, environment: dict, installed: dict[str, str]) -> list[str]:
    """'name installed (lock: pinned)' for each locked package the interpreter lacks or has in another version."""
    found = []
    for name, version in sorted(applying(lock, environment).items()):
        have = installed.get(name)
        if have is None or _local_label_free(have) != version:
            found.append(f"{name} {have or 'missing'} (lock: {version})")
    return found


def report(assignment: str, python: str) -> tuple[str, list[str]]:
    """The text of <assignment>-versions.txt and the kernels' differences from the lock."""
    student, grader = locked("student"), locked("grader")
    environment, installed = kernel_versions(python)
    problems = differences(student, environment, installed)
    lines = [f"# {assignment}: the versions of this release's environments.",
             "", "# Gradescope (Ubuntu 22.04, Python 3.10, x86_64): setup.sh installs, for the kernels,"]
    lines += [f"{name}=={version}" for name, version in sorted(applying(student, GRADESCOPE).items())]
    lines += ["", "# ... and for the grader"]
    lines += [f"{name}=={version}" for name, version in sorted(applying(grader, GRADESCOPE).items())]
    lines += ["", f"# attn-ref check graded with {python} (Python {environment['python_full_version']}, "
                  f"{environment['sys_platform']} {environment['platform_machine']}):"]
    lines += [f"{name}=={installed[name]}" for name in sorted(applying(student, environment)) if name in installed]
    lines += ["", "# differences from the lock: " + ("; ".join(problems) if problems else "none")]
    return "\n".join(lines) + "\n", problems


def write_report(folder: Path, assignment: str, python: str) -> list[str]:
    text, problems = report(assignment, python)
    (folder / f"{assignment}-versions.txt").write_text(text)
    return problems
