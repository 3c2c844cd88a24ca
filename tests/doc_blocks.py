"""The code blocks of the README and the guides (docs/*.md), each with the marker that says how CI holds it.

A fenced block must follow, on the line right before its opening fence, one marker:

    <!-- doc: run -->              run it as shown (bash, or python), from a checkout holding a release and a class
    <!-- doc: run slow -->         the same, in a test marked slow (a build, a cluster)
    <!-- doc: transcript -->       a console block: run each `$ ` command; each other line must match a line the
                                   commands printed, in order (`…` matches anything)
    <!-- doc: transcript slow -->  the same, in a test marked slow
    <!-- doc: excerpt PATH -->     every line of the block but `...` is a line of PATH (from the repository's root),
                                   in order
    <!-- doc: shown: REASON -->    not run, for the reason given (Slurm, Gradescope's web page, the network)

An unmarked block, an unknown marker, a marker with no block under it or a shown block without a reason is an
error (tests/docs/test_docs.py), so a guide cannot show code that nothing holds to the code base.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^\s*<!--\s*doc:\s*(?P<body>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
KINDS = ("run", "run slow", "transcript", "transcript slow", "excerpt", "shown")
ELLIPSIS = ("...", "…")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it is, its language, its marker (kind and argument) and its text."""

    page: str  # relative to the repository's root
    line: int  # of the opening fence, 1-based
    lang: str
    kind: str  # one of KINDS, or "" where unmarked
    arg: str  # excerpt: the path; shown: the reason
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The README and every guide."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _marker(body: str) -> tuple[str, str]:
    """(kind, argument) of a marker's body, or ("?" + body, "") for one this module does not know."""
    if body in ("run", "run slow", "transcript", "transcript slow"):
        return body, ""
    for kind, sep in (("excerpt", " "), ("shown", ":")):
        if body.startswith(kind + sep) or body == kind:
            return kind, body[len(kind) + 1:].strip()
    return "?" + body, ""


def blocks(page: Path) -> tuple[list[Block], list[str]]:
    """A page's blocks, and its errors: markers that stand above no block, unclosed fences."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = str(page.relative_to(REPO)) if page.is_relative_to(REPO) else page.name
    found, errors, pending, i = [], [], None, 0
    while i < len(lines):
        marker, fence = MARKER.match(lines[i]), FENCE.match(lines[i])
        if marker:
            if pending is not None:
                errors.append(f"{name}:{pending[0]}: a marker with no block under it")
            pending = (i + 1, *_marker(marker["body"]))
            i += 1
            continue
        if not fence:
            if pending is not None and lines[i].strip():
                errors.append(f"{name}:{pending[0]}: a marker with no block under it")
                pending = None
            i += 1
            continue
        close = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence["fence"]), None)
        if close is None:
            errors.append(f"{name}:{i + 1}: a fence that is never closed")
            break
        indent = len(fence["indent"])
        text = "\n".join(line[indent:] for line in lines[i + 1:close])
        kind, arg = (pending[1], pending[2]) if pending is not None and pending[0] == i else ("", "")
        found.append(Block(name, i + 1, fence["lang"], kind, arg, text + "\n"))
        pending, i = None, close + 1
    if pending is not None:
        errors.append(f"{name}:{pending[0]}: a marker with no block under it")
    return found, errors


def problems(block: Block) -> list[str]:
    """What is wrong with a block's marker, before anything runs."""
    if not block.kind:
        return [f"{block.where}: a {block.lang or 'plain'} block with no marker (<!-- doc: run --> or "
                f"<!-- doc: shown: why -->, see tests/doc_blocks.py)"]
    if block.kind not in KINDS:
        return [f"{block.where}: unknown marker {block.kind[1:]!r} (known: {', '.join(KINDS)})"]
    if block.kind == "shown" and not block.arg:
        return [f"{block.where}: a shown block must say why it is not run"]
    if block.kind == "excerpt" and not (REPO / block.arg).is_file():
        return [f"{block.where}: excerpt of {block.arg!r}, which is not a file of the repository"]
    if block.kind.startswith("run") and block.lang not in ("bash", "sh", "python"):
        return [f"{block.where}: a run block must be bash or python, not {block.lang!r}"]
    if block.kind.startswith("transcript") and block.lang != "console":
        return [f"{block.where}: a transcript is a console block"]
    return []


def missing_from_excerpt(block: Block) -> list[str]:
    """The block's lines (blank lines and `...` aside) that are not lines of its file, in order."""
    source = [line.rstrip() for line in (REPO / block.arg).read_text(encoding="utf-8").splitlines()]
    missing, at = [], 0
    for line in block.text.splitlines():
        line = line.rstrip()
        if not line.strip() or line.strip() in ELLIPSIS:
            continue
        try:
            at = source.index(line, at) + 1
        except ValueError:
            missing.append(line)
    return missing


@dataclass(frozen=True)
class Step:
    """One command of a transcript and the lines it is shown printing."""

    command: str
    expected: tuple[str, ...]


def transcript(block: Block) -> list[Step]:
    """A console block's commands (`$ `, continued by a trailing backslash) and the output shown under each."""
    steps: list[Step] = []
    command, expected, continued = None, [], False
    for line in block.text.splitlines():
        if continued:
            command += "\n" + line
        elif line.startswith("$ "):
            if command is not None:
                steps.append(Step(command, tuple(expected)))
            command, expected = line[2:], []
        elif line.strip():
            expected.append(line)
        continued = command is not None and line.endswith("\\") and (continued or line.startswith("$ "))
    if command is not None:
        steps.append(Step(command, tuple(expected)))
    return steps


def unmatched(expected: tuple[str, ...], printed: str) -> list[str]:
    """The expected lines that no printed line matches, in order; `…` in an expected line matches anything, and
    an expected line matches a whole printed line (a CSV's byte-order mark aside)."""
    lines, at, missing = [" ".join(line.lstrip("\ufeff").split()) for line in printed.splitlines()], 0, []
    for want in expected:  # runs of spaces are one space on both sides: a table's padding is not the point
        pattern = re.compile(".*".join(re.escape(" ".join(part.split())) for part in want.split("…")))
        hit = next((j for j in range(at, len(lines)) if pattern.fullmatch(lines[j])), None)
        if hit is None:
            missing.append(want)
        else:
            at = hit + 1
    return missing


INLINE_CODE = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"^(?:\$ )?((?:attn-ref|make) .*)")


def _joined(text: str) -> list[str]:
    """A block's lines with continuations joined: a trailing backslash, or an indented line of options."""
    lines: list[str] = []
    for line in text.splitlines():
        if lines and (lines[-1].endswith("\\") or re.match(r"^\s+[\[-]", line)):
            lines[-1] = lines[-1].rstrip("\\") + " " + line.strip()
        else:
            lines.append(line.strip())
    return lines


def commands(page: Path) -> list[tuple[str, str]]:
    """(where, command) for every `attn-ref ...` and `make ...` the page shows: in its blocks (run or shown) and
    in its inline code, so a shown-only block and a sentence are held to the command line too."""
    found = []
    page_blocks, _ = blocks(page)
    for block in page_blocks:
        for line in _joined(block.text):
            if match := COMMAND.match(line):
                found.append((block.where, match[1]))
    inside = {n for b in page_blocks for n in range(b.line, b.line + b.text.count("\n") + 2)}
    name = str(page.relative_to(REPO))
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if number not in inside:
            found += [(f"{name}:{number}", span) for span in INLINE_CODE.findall(line) if COMMAND.match(span)]
    return found


def options(command: str) -> tuple[str, list[str]]:
    """(verb, its --options) of an `attn-ref` or `make` command as shown: a synopsis's brackets and bars, a
    trailing comment and values are left out."""
    command = re.sub(r"\s#\s.*$", "", command)
    words = re.sub(r"[\[\]|]", " ", command).split()
    verb = next((w for w in words[1:] if not w.startswith("-")), "")
    return verb, [w.split("=")[0] for w in words[1:] if w.startswith("--")]
