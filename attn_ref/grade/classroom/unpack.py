"""A Gradescope "Export Submissions" zip, unpacked with bounds: what a student put in it can neither fill the
TA's disk nor the grader's memory, nor land outside the export's folder, nor be read by anyone else.

Students choose what their submissions hold, so the export is checked before anything is written: per
member (its size, and how much it inflates: a zip bomb's ratio), per submission (its files and bytes) and
for the whole export (its members and bytes), on the sizes its central directory declares, with the intake's
rules for zips (intake/zips.py: no member overlaps another, none inflates past what its compressed bytes
allow, none lies deeper than MAX_PARTS folders); then each member is streamed to disk in chunks, counting the
bytes it really inflates to, so a member that lies about its size is stopped at what its sizes allow. A submission past a bound is not unpacked at all: it is listed with
the reason (its row says "error: ...": the student's doing, as for a notebook too large), and the class goes
on. An export past its own bounds is refused as a whole, before anything is written.

Files are written 0600 in folders 0700 (owned.py); members with absolute paths, "..", links or names that
are not plain path parts are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..intake import zips
from ..intake.metadata import MAX_METADATA, METADATA
from ..intake.submission import MAX_FOLDER_ENTRIES, MAX_NOTEBOOK
from ..isolation.safeio import remove_tree
from ..owned import FILE_MODE, private_folder, write_private
from ..scoring.autograder import AutograderError

MAX_MEMBER = MAX_NOTEBOOK  # one file of a submission (a notebook, a PDF of written answers)
MAX_SUBMISSION = 4 * MAX_NOTEBOOK  # one submission's files together
MAX_SUBMISSION_FILES = MAX_FOLDER_ENTRIES
MAX_EXPORT = 32 << 30  # the whole export, inflated
MAX_EXPORT_MEMBERS = 100_000  # a class of 1,000 exports a few thousand
CHUNK = zips.CHUNK
DONE = ".complete"  # <hash>.complete, written last beside <hash>/, with the refused submissions' reasons (JSON)


@dataclass
class Unpacked:
    folder: Path  # the folder that holds submission_metadata.yml
    refused: dict[str, str] = field(default_factory=dict)  # submission folder -> why it was not unpacked


def hash_into(digest, path: Path) -> None:
    """A file's bytes into ``digest``, read in chunks (an export is gigabytes)."""
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)


def file_hash(path: Path) -> str:
    """The SHA-256 of a file."""
    digest = hashlib.sha256()
    hash_into(digest, path)
    return digest.hexdigest()


def _parts(member: zipfile.ZipInfo) -> tuple[str, ...] | None:
    """The member's path as plain parts (zips.parts), or None for one never written; a path deeper than
    zips.MAX_PARTS is kept here and refused with its submission (_why_refused)."""
    return zips.parts(member)


def export_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """Where an export's metadata is, from the paths of what it holds (each as its parts), or None for what is not
    an export. A class is never decided by what a student controls: a notebook at the top (what grader.export()
    makes) is one submission, whatever else it holds; otherwise the metadata file is at the top, or inside the one
    top folder (the zip Gradescope gives, unpacked as it is). Hidden entries and macOS's __MACOSX are not looked
    at."""
    visible = [p for p in paths if p and not any(part.startswith(".") or part == "__MACOSX" for part in p)]
    tops = {p[0] for p in visible}
    for top in [()] + ([(tops.pop(),)] if len(tops) == 1 else []):
        inside = [p[len(top):] for p in visible if p[:len(top)] == top and len(p) > len(top)]
        if any(len(p) == 1 and p[0].lower().endswith(".ipynb") for p in inside):
            return None  # a submission's notebook at its top
        if (METADATA,) in inside:
            return top
    return None


def _metadata_prefix(members: list[zipfile.ZipInfo]) -> tuple[str, ...]:
    """The parts of the folder holding the export's submission_metadata.yml (export_prefix)."""
    prefix = export_prefix([zips.loose_parts(m) for m in members if not m.is_dir()])
    if prefix is None:
        raise AutograderError(f"no {METADATA} at the top of the export or inside its one top folder (or a notebook "
                              "at its top: one submission, not a class)")
    return prefix


def _too_big(member: zipfile.ZipInfo) -> str:
    if member.file_size > MAX_MEMBER:
        return f"its file {member.filename} is {member.file_size >> 20} MB unpacked; a file may be at most {MAX_MEMBER >> 20} MB"
    if len(zips.parts(member) or ()) > zips.MAX_PARTS:
        return f"its file {member.filename[:200]}... lies more than {zips.MAX_PARTS} folders deep"
    return zips.bomb(member)


def _plan(archive: zipfile.ZipFile) -> tuple[tuple[str, ...], dict[str, list], dict[str, str]]:
    """What to unpack: the metadata folder's parts, its members per submission folder ("" for the folder's
    own files), and the submissions refused with why. Raises for an export past its own bounds."""
    members = archive.infolist()
    if len(members) > MAX_EXPORT_MEMBERS:
        raise AutograderError(f"the export holds {len(members)} files; at most {MAX_EXPORT_MEMBERS} are unpacked")
    total = sum(m.file_size for m in members)
    if total > MAX_EXPORT:
        raise AutograderError(f"the export is {total >> 30} GB unpacked; at most {MAX_EXPORT >> 30} GB are unpacked")
    prefix = _metadata_prefix(members)
    by_folder, never_written = _by_folder(members, prefix)
    files = {folder: [m for m, _ in found if not m.is_dir()] for folder, found in by_folder.items()}
    _bound_metadata(files.pop("", []))  # the export's own files: its metadata, bounded on its own
    refused = {folder: why for folder, found in files.items() if (why := _why_refused(found))}
    refused |= {folder: "its files are links or paths that leave its folder, which are never written"
                for folder in never_written if not files.get(folder) and not folder.startswith((".", "__MACOSX"))}
    return prefix, by_folder, refused


def _by_folder(members: list[zipfile.ZipInfo], prefix: tuple[str, ...]) -> tuple[dict[str, list], set[str]]:
    """The members under the export's folder, per submission folder ("" for the folder's own files), each with its
    path there; and the submission folders holding a member that is never written (a link, one that leaves)."""
    by_folder: dict[str, list] = {}
    never_written = set()
    for member in members:
        loose, parts = zips.loose_parts(member), _parts(member)
        if loose[:len(prefix)] != prefix or len(loose) == len(prefix):
            continue  # outside the export's folder, or that folder itself
        if parts is None or parts[:len(prefix)] != prefix or len(parts) == len(prefix):
            if len(loose) > len(prefix) + 1:  # inside a submission's folder: a link, "..", an odd name
                never_written.add(loose[len(prefix)])
            continue
        rest = parts[len(prefix):]
        folder = rest[0] if len(rest) > 1 else ""
        if not folder.startswith((".", "__MACOSX")):  # a hidden folder is no submission (and never written)
            by_folder.setdefault(folder, []).append((member, rest))
    return by_folder, never_written


def _bound_metadata(files: list[zipfile.ZipInfo]) -> None:
    meta = next((m for m in files if m.filename.endswith(METADATA)), None)
    if meta is not None and meta.file_size > MAX_METADATA:
        raise AutograderError(f"the export's {METADATA} is {meta.file_size >> 20} MB; at most {MAX_METADATA >> 20} MB")
    if meta is not None and (why := zips.bomb(meta)):
        raise AutograderError(f"the export's {METADATA} cannot be unpacked: {why.removeprefix('its file ')}")


def _why_refused(files: list[zipfile.ZipInfo]) -> str:
    """Why one submission's files are not unpacked (a file too big or a bomb, too many, too much), or ""."""
    if why := next((w for m in files if (w := _too_big(m))), ""):
        return why
    if len(files) > MAX_SUBMISSION_FILES:
        return f"it holds {len(files)} files; a submission may hold at most {MAX_SUBMISSION_FILES}"
    if (size := sum(m.file_size for m in files)) > MAX_SUBMISSION:
        return f"its files are {size >> 20} MB unpacked; at most {MAX_SUBMISSION >> 20} MB"
    return ""


def _stream(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path) -> str:
    """Write one member (and the folders above it), never more bytes than its sizes allow (zips.chunks); the
    reason it could not be, or ""."""
    try:
        private_folder(target.parent)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
        with os.fdopen(fd, "wb") as out:
            for chunk in zips.chunks(archive, member, MAX_MEMBER):
                out.write(chunk)
    except ValueError as err:  # inflated past what its sizes allow
        return str(err)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as err:
        # zlib's and lzma's errors are OSError/EOFError; an encrypted member is a RuntimeError; a member named
        # twice, or a file where a folder is, is an OSError
        return f"its file {member.filename} could not be unpacked ({type(err).__name__})"
    return ""


def unpack_export(path: Path, into: Path) -> Unpacked:
    """The export zip ``path`` unpacked once under ``into``/<its hash>/ (kept for regrades, with the reasons
    its refused submissions were left out; a half-written one is made again)."""
    target = Path(into) / file_hash(path)[:16]
    done = target.with_name(target.name + DONE)  # beside the unpacked tree, which no member can name
    with zips.open_checked(path, str(path), AutograderError, MAX_EXPORT_MEMBERS) as archive:
        prefix, by_folder, refused = _plan(archive)
        if done.exists():
            refused = _read_refused(done)
        else:
            if target.exists() or target.is_symlink():  # half-written by a run that was stopped: made again
                _remove(target)
            private_folder(target)
            _write(archive, target.joinpath(*prefix), by_folder, refused)
            write_private(done, json.dumps(refused, sort_keys=True).encode())
    return Unpacked(target.joinpath(*prefix), refused)


def _read_refused(done: Path) -> dict[str, str]:
    try:
        found = json.loads(done.read_bytes()[:MAX_METADATA] or b"{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _write(archive: zipfile.ZipFile, folder: Path, by_folder: dict[str, list], refused: dict[str, str]) -> None:
    """Every file of a submission not refused, and the metadata, under ``folder`` (the metadata's); a
    submission whose file fails to stream is removed whole and refused."""
    for name, found in sorted(by_folder.items()):
        if name in refused:
            continue
        for member, rest in found:
            if member.is_dir() or (not name and rest != (METADATA,)):
                continue  # folders are made for the files in them; of the export's own files, only its metadata
            why = _stream(archive, member, folder.joinpath(*rest))
            if why and not name:
                raise AutograderError(f"the export's own files could not be unpacked: {why.removeprefix('its ')}")
            if why:  # this submission alone: nothing of it is kept
                refused[name] = why
                _remove(folder / name)
                break


def _remove(folder: Path) -> None:
    """A folder moved out of the way at once (a rename), then removed without recursion (safeio.remove_tree):
    however deep an export made it, the next run never meets it."""
    aside = folder.with_name(f".{folder.name}.removed-{os.getpid()}-{os.urandom(4).hex()}")
    os.replace(folder, aside)
    remove_tree(aside)
