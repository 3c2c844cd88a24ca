"""Zips a student or an export hands in, read so that they cannot fool the reader.

A zip's central directory declares each member's place and sizes; none of it is believed alone:
- members may not overlap or share data (a member whose data quotes the next one's header inflates the whole
  archive again per member: 338 KB wrote 960 MB), nor run into the central directory, so the compressed bytes
  the members read together are at most the file's own;
- a member inflates to at most MAX_RATIO times the compressed bytes it has, plus RATIO_SLACK (small files
  compress little), checked on what it declares before a byte is written and on what it really inflates to
  while it streams: the bytes written are bounded by the bytes read, whatever the sizes say;
- a member's path is plain parts (never absolute, "..", a link), at most MAX_PARTS deep.
"""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import IO

MAX_RATIO = 200  # inflated / compressed: notebooks inflate 2-20x, zip bombs 1000x
RATIO_SLACK = 64 << 10
MAX_PARTS = 64  # folders below an export's or a submission's top: a real one nests a few
CHUNK = 1 << 20
_LOCAL_HEADER = 30  # a local file header's fixed part, before its name and extra field


def overlapping(archive: zipfile.ZipFile) -> str:
    """The name of the first member whose data overlaps another member's or the central directory, or ""."""
    members = sorted(archive.infolist(), key=lambda m: m.header_offset)
    for member, after in zip(members, members[1:] + [None]):
        name = member.orig_filename.encode("utf-8" if member.flag_bits & 0x800 else "cp437", "replace")
        end = member.header_offset + _LOCAL_HEADER + len(name) + member.compress_size  # at least this far
        if end > (after.header_offset if after is not None else archive.start_dir):
            return member.filename
    return ""


def allowed(member: zipfile.ZipInfo) -> int:
    """The most bytes a member may inflate to, from the compressed bytes it has."""
    return MAX_RATIO * member.compress_size + RATIO_SLACK


def bomb(member: zipfile.ZipInfo) -> str:
    """Why a member's declared sizes make it a zip bomb, or ""."""
    if member.file_size <= allowed(member):
        return ""
    return (f"its file {member.filename} inflates {member.file_size // max(member.compress_size, 1)} times "
            f"(at most {MAX_RATIO}: a zip bomb)")


def parts(member: zipfile.ZipInfo) -> tuple[str, ...] | None:
    """The member's path as plain parts, or None for one never written: absolute, "..", a link, odd names."""
    path = PurePosixPath(member.filename.replace("\\", "/"))
    if path.is_absolute() or not path.parts or any(p in ("..", ".") or "\0" in p for p in path.parts):
        return None
    if stat.S_ISLNK(member.external_attr >> 16):
        return None
    return path.parts


def chunks(archive: zipfile.ZipFile, member: zipfile.ZipInfo, limit: int) -> Iterator[bytes]:
    """A member's bytes in chunks, stopped (ValueError, with why) past ``limit`` or past what its compressed
    bytes allow, whatever its declared size says. What a damaged member raises is zipfile's and zlib's."""
    most = min(limit, allowed(member), member.file_size)
    done = 0
    with archive.open(member) as source:
        while chunk := source.read(CHUNK):
            done += len(chunk)
            if done > most:
                raise ValueError(f"its file {member.filename} inflates past the {most} bytes its sizes allow")
            yield chunk


def open_checked(file: IO[bytes] | str, where: str, error: type[Exception]) -> zipfile.ZipFile:
    """A zip whose members neither overlap nor run into its directory; ``error(message)`` otherwise."""
    try:
        archive = zipfile.ZipFile(file)
    except Exception:  # noqa: BLE001 - BadZipFile, and what odd headers make the reader raise: the bytes are not ours
        raise error(f"{where} is not a valid zip file") from None
    if shared := overlapping(archive):
        archive.close()
        raise error(f"{where} is not a valid zip file: its member {shared} overlaps another's data (a crafted zip); "
                    "make it again")
    return archive
