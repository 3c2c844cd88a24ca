"""A fresh attacker's round on the intake (each attack as it was found, run as it was run): none may raise what is
not the intake's error, hang, grow the reader far past the file, or make a student's zip a class."""

from __future__ import annotations

import bz2
import json
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from attn_ref.grade.intake import ExportError, SubmissionError, metadata
from attn_ref.grade.intake.notebook import read
from attn_ref.grade.intake.submission import load


def _notebook() -> bytes:
    nb = nbformat.v4.new_notebook(metadata={"otter": {"assignment_name": "lab"}})
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    return nbformat.writes(nb).encode()


@pytest.mark.parametrize("data", [b'"' + b'\\"' * 100_000, b'""' * (3 << 20), b"[" + b'"a",' * 600_000 + b"1]"],
                         ids=["a string never closed, of escaped quotes", "adjacent strings", "many strings"])
def test_a_notebook_of_strings_is_refused_in_linear_time(data):
    start = time.monotonic()
    with pytest.raises(SubmissionError):
        read(data, "lab.ipynb")
    assert time.monotonic() - start < 5  # 40 KB of \" took 5 s before: quadratic


@pytest.mark.parametrize("broken, said", [(b"\\q", "not valid JSON"), (b"\n", "not valid JSON"), (b"\xff", "not UTF-8")],
                         ids=["a bad escape", "a raw newline", "a byte that is not UTF-8"])
def test_a_long_source_that_is_not_valid_json_is_the_students_error(broken, said):
    nb = json.loads(_notebook())
    nb["cells"][0]["source"] = "MARK"
    data = json.dumps(nb).encode().replace(b"MARK", b"x" * 2000 + broken)
    with pytest.raises(SubmissionError, match=said):
        read(data, "lab.ipynb")


def _raw_zip(path: Path, name: bytes, method: int, compressed: bytes, declared: int) -> Path:
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 46, 0, method, 0, 0, 0, len(compressed), declared, len(name), 0)
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 46, 46, 0, method, 0, 0, 0, len(compressed), declared,
                          len(name), 0, 0, 0, 0, 0, 0)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central + name), len(local + name) + len(compressed), 0)
    path.write_bytes(local + name + compressed + central + name + end)
    return path


def _peak_of(imports: str, code: str, *args: str) -> tuple[str, int]:
    """What a fresh process printed running ``code``, and how much that grew it (VmHWM less VmRSS once ``imports``
    ran), in MB."""
    probe = ("import re, sys\n" + imports + "\nstatus = lambda key: int(re.search(key + r':\\s+(\\d+) kB', "
             "open('/proc/self/status').read()).group(1))\nbase = status('VmRSS')\n" + code
             + "\nprint((status('VmHWM') - base) >> 10)")
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
    said, grown = done.stdout.strip().rsplit("\n", 1)
    return said, int(grown)


def test_a_bzip2_member_is_refused_before_it_inflates(tmp_path):
    """A 453-byte bzip2 member took the reader to 800 MB: zipfile inflates a bzip2 block whole."""
    compressor = bz2.BZ2Compressor(9)
    data = b"".join(compressor.compress(bytes(8 << 20)) for _ in range(50)) + compressor.flush()
    path = _raw_zip(tmp_path / "bomb.zip", b"lab.ipynb", zipfile.ZIP_BZIP2, data, 1000)
    said, grown = _peak_of("from attn_ref.grade.intake.submission import load",
                           "try:\n    load(sys.argv[1])\nexcept Exception as err:\n    print(type(err).__name__, err)", str(path))
    assert said.startswith("SubmissionError") and "compressed with method 12" in said and grown < 20, (said, grown)


def test_a_directory_of_600000_entries_is_refused_before_zipfile_lists_it(tmp_path):
    """30 MB of central directory took 268 MB and 4 s to list: its entries are counted from their headers first."""
    entries = b"".join(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(b"%x" % i), 0,
                                   0, 0, 0, 0, 0) + b"%x" % i for i in range(600_000))
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 600_000 & 0xFFFF, 600_000 & 0xFFFF, len(entries), 0, 0)
    path = tmp_path / "many.zip"
    path.write_bytes(entries + end)
    said, grown = _peak_of("from pathlib import Path\nfrom attn_ref.grade.intake.submission import load\n"
                           "from attn_ref.grade.classroom.discover import is_gradescope_export",
                           "print(is_gradescope_export(Path(sys.argv[1])))\ntry:\n    load(sys.argv[1])\n"
                           "except Exception as err:\n    print(type(err).__name__, err)", str(path))
    assert said.splitlines() == ["False", "SubmissionError many.zip holds more than 10,000 files; at most 10,000 are read"]
    assert grown < 60, grown


@pytest.mark.parametrize("name, attr", [("lab.ipynb", 0o120777 << 16), ("/lab.ipynb", 0), ("x\\lab.ipynb", 0)],
                         ids=["flagged a link", "absolute", "a backslash in its name"])
def test_a_zip_whose_top_notebook_a_reader_opens_is_one_submission(tmp_path, name, attr):
    from attn_ref.grade.classroom.discover import is_gradescope_export

    path = tmp_path / "late.zip"
    with zipfile.ZipFile(path, "w") as archive:
        member = zipfile.ZipInfo(name)
        member.external_attr = attr
        archive.writestr(member, _notebook())
        archive.writestr("submission_metadata.yml", "s2:\n  :submitters: [{':name': Bob}]\n")
    assert not is_gradescope_export(path)
    assert load(path)[0].assignment_name == "lab"


def test_a_damaged_zip_is_one_submission_and_its_own_error(tmp_path):
    from attn_ref.grade.classroom.discover import is_gradescope_export

    path = tmp_path / "u8.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("lab.ipynb", _notebook())
        archive.writestr("zz\u00e9.txt", b"x")
    raw = bytearray(path.read_bytes())
    at = raw.rfind("zz\u00e9".encode())
    raw[at + 2:at + 4] = b"\xff\xfe"  # the directory's name is no UTF-8 though its flag says it is
    path.write_bytes(bytes(raw))
    assert not is_gradescope_export(path)
    with pytest.raises(SubmissionError, match="not a valid zip"):
        load(path)


def test_yaml_aliases_that_multiply_the_entries_are_refused_in_the_child(tmp_path):
    """An 85 KB file naming one list of 50 submitters from 2,000 entries took the TA's process to 216 MB."""
    lines = ["s0:\n  :submitters: &S\n"]
    lines += [f"  - {{':name': 'N{i:02d}{'n' * 197}', ':sid': '{'s' * 200}', ':email': '{'e' * 200}'}}\n" for i in range(50)]
    lines += [f"s{i}: {{':submitters': *S}}\n" for i in range(1, 2000)]
    path = tmp_path / metadata.METADATA
    path.write_text("".join(lines))
    said, grown = _peak_of("from attn_ref.grade.intake import metadata",
                           "try:\n    metadata.read(sys.argv[1])\nexcept Exception as err:\n    print(type(err).__name__, err)",
                           str(path))
    assert said.startswith("ExportError") and "aliases" in said and grown < 40, (said, grown)


def test_an_entry_no_folder_can_be_named_costs_its_row_alone(tmp_path):
    from attn_ref.grade.classroom.discover import discover

    export = tmp_path / "export"
    (export / "submission_1").mkdir(parents=True)
    (export / "submission_1" / "lab.ipynb").write_bytes(_notebook())
    (export / metadata.METADATA).write_text("submission_1: {}\n" + "x" * 300 + ": {}\n")
    subs = {s.key[:12]: s for s in discover(export, tmp_path / "out")}
    assert subs["submission_1"].problem == ""
    assert "not the name of a folder inside it" in subs["x" * 12].problem


def test_an_exports_own_names_never_meet_the_unpacking_record(tmp_path):
    """A folder .complete/ at the export's top was written where the unpacking's record goes: every run then raised."""
    from attn_ref.grade.classroom.discover import discover

    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(metadata.METADATA, "submission_1: {}\n")
        archive.writestr("submission_1/lab.ipynb", _notebook())
        archive.writestr(".complete/x", b"x")
    for _ in range(2):
        assert [(s.key, s.problem) for s in discover(path, tmp_path / "out")] == [("submission_1", "")]


def test_a_submission_whose_files_are_all_links_is_its_students_error(tmp_path):
    from attn_ref.grade.classroom.discover import discover

    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(metadata.METADATA, "s1: {}\ns2: {}\n")
        archive.writestr("s1/lab.ipynb", _notebook())
        link = zipfile.ZipInfo("s2/lab.ipynb")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "/etc/passwd")
    subs = {s.key: s for s in discover(path, tmp_path / "out")}
    assert subs["s2"].fault.value == "student" and "links or paths that leave its folder" in subs["s2"].problem


def test_text_fields_that_no_file_can_hold_are_made_plain():
    """A tag of a lone surrogate made writing the kernel's notebook raise: "internal grader error" for her input."""
    nb = json.loads(_notebook())
    nb["metadata"]["kernelspec"] = {"name": "\ud800"}
    nb["cells"][0]["metadata"]["tags"] = ["\ud800"]
    found = read(json.dumps(nb).encode(), "lab.ipynb")
    assert found.cells[0].tags == ("?",) and found.kernel_name == "?"
    assert read(found.to_ipynb(), "again").cells == found.cells
    nb["nbformat"] = "4" * 2000
    [warning] = [w for w in read(json.dumps(nb).encode(), "lab.ipynb").warnings if "format" in w]
    assert "a text of 2002 bytes" in warning and "\0" not in warning


def test_a_folder_of_two_zips_says_so_and_a_hidden_zip_is_not_its_submission(tmp_path):
    folder = tmp_path / "ada"
    (folder / "__MACOSX").mkdir(parents=True)
    for name in ("a.zip", "b.zip"):
        with zipfile.ZipFile(folder / name, "w") as archive:
            archive.writestr("lab.ipynb", _notebook())
    with pytest.raises(SubmissionError, match="several zips and no notebook"):
        load(folder)
    (folder / "b.zip").rename(folder / "__MACOSX" / "b.zip")
    assert load(folder)[1] == "lab.ipynb"


def test_scores_that_are_no_number_are_none(tmp_path):
    path = tmp_path / metadata.METADATA
    path.write_text("s1: {':score': nan}\ns2: {':score': 1e999}\ns3: {':score': '2.5'}\n")
    assert [e.score for e in metadata.read(path)] == [None, None, 2.5]
    path.write_text("- a\n")
    with pytest.raises(ExportError):
        metadata.read(path)
