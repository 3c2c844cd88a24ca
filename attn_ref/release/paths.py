"""Where the release verbs find what they read and write by default: the course (from the working folder), the
release beside it, and the checkout's locks."""

from __future__ import annotations

from pathlib import Path


def repo_root() -> Path:
    """The repository root when running from a checkout (where pyproject.toml sits), else the current folder."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else Path.cwd()


def find_course(start: Path | None = None) -> Path | None:
    """The course a verb works on without --course: the nearest folder, at or above ``start`` (the working
    folder), that is a course (it holds registry.py) or holds one (course/registry.py); None where none is. Never
    the checkout attn-ref was installed from, unless the working folder is in it."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "registry.py").is_file():
            return folder
        if (folder / "course" / "registry.py").is_file():
            return folder / "course"
    return None
