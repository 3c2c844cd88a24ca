"""Where a checkout keeps what the release verbs read and write by default (course/, locks/, the release)."""

from __future__ import annotations

from pathlib import Path


def repo_root() -> Path:
    """The repository root when running from a checkout (where pyproject.toml sits), else the current folder."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else Path.cwd()
