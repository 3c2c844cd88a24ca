"""The README and the guides, tested as they read: every code block runs in CI as shown or is marked as shown
only with a reason (tests/doc_blocks.py), every command a page names has the options it gives it, and the
site builds with warnings as errors (broken links and anchors fail).

The runnable blocks of a page run in order, in a folder laid out as a checkout after `make release`:
`autograder/`, `assignments/` and `solutions/` (the session's release), copies of `course/`, `tests/fixtures/`
and `locks/`, and what a TA is handed: `class/` (two lab notebooks, the solution and the blank) and
`examples/` (the example class: Gradescope's export of three practice submissions and the course's Canvas
gradebook export, made from the session's release by examples/make_examples.py).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import (
    REPO,
    Block,
    blocks,
    commands,
    missing_from_excerpt,
    options,
    pages,
    problems,
    transcript,
    unmatched,
)

from attn_ref.cli import build_parser

PAGES = pages()
COMMAND_TIMEOUT = 900  # seconds: the slowest block builds and checks an assignment


def _all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)[0]]


def test_every_block_is_marked_and_every_marker_stands_above_a_block():
    errors = [error for page in PAGES for error in blocks(page)[1]]
    errors += [problem for block in _all_blocks() for problem in problems(block)]
    assert not errors, "\n".join(errors)


def test_the_markers_fail_a_page_that_drifts(tmp_path):
    """What the page tests rest on: an unmarked block, a marker over nothing and a shown block without a reason
    are errors; a run block that fails and a transcript that does not print what it shows fail their page."""
    page = tmp_path / "drift.md"
    page.write_text("```bash\nls\n```\n\n<!-- doc: run -->\nprose, not a block\n\n<!-- doc: shown: -->\n```bash\nls\n```\n"
                    "\n<!-- doc: run -->\n```bash\nexit 3\n```\n\n<!-- doc: transcript -->\n```console\n$ echo one\ntwo\n```\n")
    found, errors = blocks(page)
    errors += [problem for block in found for problem in problems(block)]
    assert len(errors) == 3, errors
    assert any("no marker" in e for e in errors) and any("no block under it" in e for e in errors)
    assert any("must say why" in e for e in errors)
    failing, shown_wrong = found[2], found[3]
    with pytest.raises(AssertionError, match="exited 3"):
        _run_block(failing, tmp_path)
    with pytest.raises(AssertionError, match="did not print"):
        _run_block(shown_wrong, tmp_path)


def test_every_excerpt_is_in_its_file():
    excerpts = [block for block in _all_blocks() if block.kind == "excerpt"]
    assert excerpts, "the guides show files of the course as excerpts"
    wrong = {block.where: missing_from_excerpt(block) for block in excerpts if missing_from_excerpt(block)}
    assert not wrong, f"lines an excerpt shows that its file does not have: {wrong}"


def _verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(action.choices for action in parser._actions if isinstance(action, argparse._SubParsersAction))


def _make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(), flags=re.MULTILINE))


def test_every_command_a_page_names_has_the_options_it_gives():
    """`attn-ref VERB --option` and `make TARGET` in every block (run or shown) and every inline code span."""
    parser = build_parser()
    verbs, targets, wrong = _verbs(parser), _make_targets(), []
    for page in PAGES:
        for where, command in commands(page):
            verb, flags = options(command)
            if command.startswith("make "):
                wrong += [f"{where}: make {verb}: no such target"] if verb not in targets else []
                continue
            if verb and not re.fullmatch(r"[a-z][a-z-]*", verb):
                continue  # a placeholder (`attn-ref VERB`, a transcript's `attn-ref …`)
            if verb and verb not in verbs:
                wrong.append(f"{where}: attn-ref {verb}: no such verb")
                continue
            known = verbs[verb]._option_string_actions if verb else parser._option_string_actions
            wrong += [f"{where}: attn-ref {verb} {flag}: no such option" for flag in flags if flag not in known]
    assert not wrong, "\n".join(wrong)


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """`make docs`'s build: README as the front page, every guide, the changelog; a broken link, a missing
    anchor or a page left out of the navigation fails."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    built = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    expected = {"index.html", "changelog/index.html"} | {f"{p.stem}/index.html" for p in PAGES if p.parent == REPO / "docs"}
    assert expected <= built, f"pages missing from the site: {expected - built}"


@pytest.fixture(scope="session")
def handed_to_a_ta(release, tmp_path_factory) -> Path:
    """class/ and examples/ (the example class, made by examples/make_examples.py from the session's release),
    made once."""
    out, _ = release
    base = tmp_path_factory.mktemp("handed")
    (base / "class").mkdir()
    shutil.copy(out / "solutions/lab/lab.ipynb", base / "class/ada.ipynb")
    shutil.copy(out / "assignments/lab/lab.ipynb", base / "class/alan.ipynb")
    done = subprocess.run([sys.executable, str(REPO / "examples/make_examples.py"), "--release", str(out), "--out",
                           str(base / "examples")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shutil.copy(REPO / "examples/make_examples.py", base / "examples")
    return base


@pytest.fixture
def checkout(release, handed_to_a_ta, tmp_path) -> Path:
    """A folder laid out as the checkout's root after `make release`, with what a TA is handed."""
    out, _ = release
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("autograder", "assignments", "solutions"):
        (root / name).symlink_to(out / name)
    for name in ("course", "tests/fixtures", "locks"):  # copies: a block that writes there leaves the repository alone
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("class", "examples"):
        shutil.copytree(handed_to_a_ta / name, root / name)
    return root


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)


def _run_block(block: Block, cwd: Path) -> None:
    if block.kind.startswith("transcript"):
        for step in transcript(block):
            done = _run(["bash", "-euo", "pipefail", "-c", step.command], cwd)
            printed = done.stdout + done.stderr
            assert done.returncode == 0, f"{block.where}: `{step.command}` exited {done.returncode}:\n{printed[-3000:]}"
            missing = unmatched(step.expected, printed)
            assert not missing, f"{block.where}: `{step.command}` did not print {missing}; it printed:\n{printed[-3000:]}"
        return
    if block.lang == "python":
        command = [sys.executable, "-c", block.text]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.text]
    done = _run(command, cwd)
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}"


def _runnable(page: Path) -> list[Block]:
    return [block for block in blocks(page)[0] if block.kind.startswith(("run", "transcript"))]


RUNNABLE = [pytest.param(page, id=page.name, marks=[pytest.mark.slow] * any(b.kind.endswith("slow") for b in _runnable(page)))
            for page in PAGES if _runnable(page)]


@pytest.mark.parametrize("page", RUNNABLE)
def test_a_page_runs_as_it_reads(page, checkout):
    """Each runnable block of the page, in order, from the checkout's root: it exits 0, and a transcript
    prints what the page shows."""
    for block in _runnable(page):
        _run_block(block, checkout)
