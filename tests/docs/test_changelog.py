"""CHANGELOG.md in released versions: the newest is attn_ref.__version__ (its one source), and a release that
can move a score is at least a minor version."""

from __future__ import annotations

import re

from doc_blocks import REPO

import attn_ref

HEADING = re.compile(r"^## (?P<name>\S+)(?: — (?P<date>\d{4}-\d{2}-\d{2}))?(?P<rest>.*)$", re.MULTILINE)
SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
MOVES_A_SCORE = re.compile(r"(?<!no )\bscores? (can )?moves?\b", re.IGNORECASE)  # "a score can move", not "no score moves"


def _sections() -> list[tuple[re.Match, str]]:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    found = list(HEADING.finditer(text))
    return [(m, text[m.end():found[i + 1].start() if i + 1 < len(found) else len(text)]) for i, m in enumerate(found)]


def _released() -> list[tuple[re.Match, str]]:
    return [(m, body) for m, body in _sections() if m["name"] != "Unreleased"]


def test_the_top_released_version_is_the_packages():
    sections = _sections()
    assert sections[0][0]["name"] == "Unreleased", "the changelog opens with the Unreleased heading, for what is merged next"
    assert _released()[0][0]["name"] == attn_ref.__version__, "bump attn_ref.__version__ with the release's heading"


def test_releases_are_dated_semantic_versions_newest_first():
    versions = []
    for match, _ in _released():
        assert SEMVER.match(match["name"]) and match["date"], f"not a dated semantic version: {match[0]!r}"
        versions.append(tuple(int(part) for part in match["name"].split(".")))
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions), versions


def test_a_release_that_can_move_a_score_is_at_least_a_minor_version():
    assert MOVES_A_SCORE.search("(a score can move)") and MOVES_A_SCORE.search("Scores move in practice q2")
    assert not MOVES_A_SCORE.search("(no score moves)") and not MOVES_A_SCORE.search("No score moves with these")
    moving = [m["name"] for m, body in _released() if MOVES_A_SCORE.search(m["rest"] + body)]
    assert moving, "the history has releases that moved scores, and their headings say so"
    patches = [name for name in moving if name.split(".")[2] != "0"]
    assert not patches, f"patch releases that move a score (make them minor): {patches}"
