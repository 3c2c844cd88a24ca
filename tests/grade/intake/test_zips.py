"""Zips read so that they cannot fool the reader (attn_ref/grade/intake/zips.py), each tested by the attack itself:
members that overlap, a folder 1,500 deep in an export, a run stopped half-way through unpacking."""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile
import zlib
from pathlib import Path

import nbformat
import pytest
import yaml

from attn_ref.grade.intake import SubmissionError, zips
from attn_ref.grade.intake.submission import load


def _notebook() -> bytes:
    nb = nbformat.v4.new_notebook(metadata={"otter": {"assignment_name": "lab"}})
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    return nbformat.writes(nb).encode()


def _overlapping(names: list[str], payload: bytes) -> bytes:
    """A stored zip whose every member's data holds the headers and data of all the members after it: the archive
    is read once per member (n members of a payload inflate to n^2/2 of it; 338 KB wrote 960 MB)."""
    tail, entries = payload, []
    for name in reversed(names):
        crc = zlib.crc32(tail)
        header = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, crc, len(tail), len(tail), len(name), 0)
        entries.append((name, crc, len(tail)))
        tail = header + name.encode() + tail
    central, offset = b"", 0
    for name, crc, size in reversed(entries):
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, crc, size, size, len(name), 0, 0, 0,
                               0, 0, offset) + name.encode()
        offset += 30 + len(name)  # the next member's header starts inside this one's data
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(names), len(names), len(central), len(tail), 0)
    return tail + central + end


def test_overlapping_members_are_found_and_a_plain_zip_has_none():
    data = _overlapping([f"s{i}/lab.ipynb" for i in range(5)], b"x" * 1000)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.read("s0/lab.ipynb").endswith(b"x" * 1000)  # the trick works on an unguarded reader
        assert zips.overlapping(archive) == "s0/lab.ipynb"
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w") as archive:
        for i in range(5):
            archive.writestr(f"s{i}/lab.ipynb", b"x" * 1000)
    with zipfile.ZipFile(plain) as archive:
        assert zips.overlapping(archive) == ""


def test_an_export_of_overlapping_members_is_refused_before_anything_is_written(tmp_path):
    from attn_ref.grade.classroom.discover import discover
    from attn_ref.grade.scoring.autograder import AutograderError

    names = [f"e/s{i}/lab.ipynb" for i in range(300)]
    metadata = yaml.safe_dump({f"s{i}": {":submitters": [{":name": f"s{i}"}]} for i in range(300)}).encode()
    data = _overlapping(["e/submission_metadata.yml", *names], metadata + b" " * 1000)
    export = tmp_path / "export.zip"
    export.write_bytes(data)
    with pytest.raises(AutograderError, match="overlaps another's data"):
        discover(export, tmp_path / "out")
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


def test_a_submission_zip_of_overlapping_members_is_the_students_error(tmp_path):
    path = tmp_path / "lab.zip"
    path.write_bytes(_overlapping(["lab.ipynb", "notes.txt"], _notebook()))
    with pytest.raises(SubmissionError, match="overlaps another's data"):
        load(path)


def test_a_member_inflating_past_its_ratio_is_refused_from_what_it_declares(tmp_path):
    path = tmp_path / "lab.zip"
    nb = json.loads(_notebook())
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": " " * (8 << 20)}]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("lab.ipynb", json.dumps(nb))
    assert path.stat().st_size < 64 << 10
    with pytest.raises(SubmissionError, match="a zip bomb"):
        load(path)


def test_a_folder_1500_deep_costs_its_submission_and_a_stopped_run_never_blocks_the_next(tmp_path):
    """A member 1,500 folders deep is refused with its submission (shutil.rmtree recursed once per level and ended
    the run); a half-written unpacking that deep, left by a stopped run, is moved aside and removed."""
    from attn_ref.grade.classroom.discover import discover
    from attn_ref.grade.classroom.unpack import file_hash

    export = tmp_path / "export.zip"
    deep = "/".join(["d"] * 1500)
    metadata = {f: {":submitters": [{":name": f}]} for f in ("s1", "s2")}
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("e/submission_metadata.yml", yaml.safe_dump(metadata))
        archive.writestr("e/s1/lab.ipynb", _notebook())
        archive.writestr(f"e/s2/{deep}/lab.ipynb", _notebook())
    out = tmp_path / "out"
    half = out / ".export" / file_hash(export)[:16]  # what a run stopped while unpacking leaves: no .complete
    os.makedirs(half / "e" / "s2")
    here = os.open(half / "e" / "s2", os.O_RDONLY)
    for _ in range(1500):  # deeper than the longest path: made relative to each folder in turn
        os.mkdir("d", dir_fd=here)
        inner = os.open("d", os.O_RDONLY, dir_fd=here)
        os.close(here)
        here = inner
    os.close(here)
    subs = {s.key: s for s in discover(export, out)}
    assert subs["s1"].problem == "" and (subs["s1"].path / "lab.ipynb").is_file()
    assert "lies more than 64 folders deep" in subs["s2"].problem and subs["s2"].fault.value == "student"
    assert sorted(p.name for p in (out / ".export").iterdir()) == [half.name, half.name + ".complete"]
    assert not (half / "e" / "s2").exists()


def test_an_export_member_that_inflates_past_its_ratio_is_stopped_while_it_streams(tmp_path):
    """A member whose declared sizes pass the ratio but whose data inflates past them: stopped at what its sizes
    allow, the bytes written bounded by the bytes read."""
    from attn_ref.grade.classroom.discover import discover

    export = tmp_path / "export.zip"
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    compressed = body.compress(bytes(32 << 20)) + body.flush()
    with zipfile.ZipFile(export, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("e/submission_metadata.yml", yaml.safe_dump({"s1": {":submitters": []}}))
        archive.writestr("e/s1/lab.ipynb", b"\0" * 1000)
    raw = bytearray(export.read_bytes())
    with zipfile.ZipFile(export) as archive:
        member = archive.getinfo("e/s1/lab.ipynb")
    start = member.header_offset + 30 + len(member.filename)
    # the member's data replaced by 32 MB of zeros deflated (32 KB), its sizes left declaring 1,000 bytes
    raw[start:start + member.compress_size] = compressed[:member.compress_size]
    export.write_bytes(bytes(raw))
    subs = {s.key: s for s in discover(export, tmp_path / "out")}
    written = sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert subs["s1"].problem and written < 1 << 20


def test_paths_are_plain_parts_or_never_written():
    def info(name: str, link: bool = False) -> zipfile.ZipInfo:
        made = zipfile.ZipInfo(name)
        made.external_attr = (0o120777 << 16) if link else 0
        return made

    assert zips.parts(info("a/b/lab.ipynb")) == ("a", "b", "lab.ipynb")
    assert [zips.parts(info(n)) for n in ("/etc/passwd", "a/../../x", "../x")] == [None] * 3
    assert zips.parts(info("a/link", link=True)) is None
    assert Path("a\\b").parts == ("a\\b",) and zips.parts(info("a\\b")) == ("a", "b")
