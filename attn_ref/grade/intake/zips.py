"""Zips a student or an export hands in, read so that they cannot fool the reader.

A zip's central directory declares each member's place and sizes; none of it is believed alone:
- members may not overlap or share data (a member whose data quotes the next one's header inflates the whole
  archive again per member: 338 KB wrote 960 MB), nor run into the central directory, so the compressed bytes
  the members read together are at most the file's own;
- a member inflates to at most MAX_RATIO times the compressed bytes it has, plus RATIO_SLACK (small files
  compress little), checked on what it declares before a byte is written and on what it really inflates to
  while it streams: the bytes written are bounded by the bytes read, whatever the sizes say;
- a member's path is plain parts (never absolute, "..", a link), at most MAX_PARTS deep;
- the directory itself is measured before zipfile reads it (its end record says how many members and how many
  bytes: 600,000 members in 30 MB took 268 MB to list);
- only stored and deflated members are read: zipfile inflates a bzip2 or LZMA block whole, before any bound can
  look (a 453-byte member took 800 MB).
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import zipfile
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import IO

MAX_RATIO = 200  # inflated / compressed: notebooks inflate 2-20x, zip bombs 1000x
RATIO_SLACK = 64 << 10
MAX_PARTS = 64  # folders below an export's or a submission's top: a real one nests a few
CHUNK = 1 << 20
METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # what is read; a student's or Gradescope's zips use these
DIRECTORY_ENTRY = 600  # bytes of the central directory allowed per member: an entry is 46, its name and fields
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
    """Why a member's declared sizes or its compression make it one not to read, or ""."""
    if member.compress_type not in METHODS:
        return (f"its file {member.filename} is compressed with method {member.compress_type} (only stored and "
                "deflated files are read)")
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


def loose_parts(member: zipfile.ZipInfo) -> tuple[str, ...]:
    """The member's path as a reader that trusts it takes it (a link's or an absolute one too, a leading / and "."
    parts dropped, a backslash part of a name as on Linux): for deciding what a zip is, so that no member a reader
    would open as a notebook at the top is left out; never for writing."""
    return tuple(part for part in member.filename.split("/") if part not in ("", "."))


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


def open_checked(file: IO[bytes] | str | os.PathLike, where: str, error: type[Exception], max_members: int,
                 overlap: bool = True) -> zipfile.ZipFile:
    """A zip of at most ``max_members`` members whose directory is measured before it is read and (unless
    ``overlap`` is False: its names alone are read) whose members neither overlap nor run into the directory;
    ``error(message)`` otherwise."""
    try:
        with open(file, "rb") if isinstance(file, (str, os.PathLike)) else contextlib.nullcontext(file) as f:
            members = _directory_members(f, max_members)
        if members > max_members:
            raise error(f"{where} holds more than {max_members:,} files; at most {max_members:,} are read")
        archive = zipfile.ZipFile(file)
    except error:
        raise
    except Exception:  # noqa: BLE001 - BadZipFile, and what odd headers make the reader raise: the bytes are not ours
        raise error(f"{where} is not a valid zip file") from None
    if overlap and (shared := overlapping(archive)):
        archive.close()
        raise error(f"{where} is not a valid zip file: its member {shared} overlaps another's data (a crafted zip); "
                    "make it again")
    return archive


def _directory_members(f: IO[bytes], most: int) -> int:
    """How many entries the central directory holds (counted up to most + 1), from its headers, as zipfile will
    read them: its end record's count is the zip's word, and zipfile makes an entry per header whatever it says.
    A directory larger than most entries can be is not read at all (counted as more)."""
    end = zipfile._EndRecData(f)  # noqa: SLF001 - the end record's reader, which zipfile itself calls first
    if end is None:
        raise zipfile.BadZipFile("no end of central directory")
    size = end[zipfile._ECD_SIZE]  # noqa: SLF001
    if size > (most + 1) * DIRECTORY_ENTRY:
        return most + 1
    start = end[zipfile._ECD_LOCATION] - size  # noqa: SLF001 - where zipfile looks for it, data before the zip allowed
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:  # noqa: SLF001
        start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
    f.seek(max(start, 0))
    data = f.read(size)
    count = at = 0
    while count <= most and data[at:at + 4] == zipfile.stringCentralDir:
        names = struct.unpack_from("<3H", data, at + 28)  # its name's, extra field's and comment's lengths
        at += zipfile.sizeCentralDir + sum(names)
        count += 1
    return count
