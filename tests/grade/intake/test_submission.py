"""Reading a submission's notebook (attn_ref/grade/intake/): what editors write is read as it is."""

from __future__ import annotations

import json
import os
import struct
import threading
import warnings
import zipfile

import nbformat
import pytest

from attn_ref.grade.intake.submission import SubmissionError, load


def _notebook(minor: int, ids: list[str | None]) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = minor
    nb.cells = [nbformat.v4.new_code_cell(f"x = {i}") for i in range(len(ids))]
    for cell, cell_id in zip(nb.cells, ids):
        cell.pop("id", None)
        if cell_id is not None:
            cell["id"] = cell_id
    return nb


@pytest.mark.parametrize("ids", [["same"] * 30, [None] * 30], ids=["duplicated ids", "4.5 without ids"])
def test_a_notebook_whose_ids_nbformat_repairs_is_read_without_a_warning_per_cell(tmp_path, ids):
    """A notebook merged by hand (every cell the same id) or saved by an editor that writes nbformat 4.5 without
    ids: nbformat repairs the ids, and its warnings (one per cell, per read) never reach the TA's console."""
    path = tmp_path / "student.ipynb"
    path.write_text(json.dumps(_notebook(5, ids)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nb, name = load(path)
    assert [str(w.message)[:80] for w in caught] == []
    assert name == "student.ipynb"
    again = nbformat.reads(nb.to_ipynb().decode(), as_version=4)  # what the kernel is given: valid, ids its own
    nbformat.validate(again)
    assert len({cell.id for cell in again.cells}) == len(ids) == len(nb.cells)


@pytest.mark.parametrize("data", [b"", b"\n  \r\n"], ids=["0 bytes", "blank lines"])
def test_an_empty_file_is_said_to_be_empty(tmp_path, data):
    """A notebook whose save never finished, or an upload of nothing: the status says so in plain words."""
    from attn_ref.grade.intake.submission import SubmissionError

    (tmp_path / "ada.ipynb").write_bytes(data)
    with pytest.raises(SubmissionError, match=rf"^ada\.ipynb is empty \({len(data)} bytes\): no notebook was saved in it$"):
        load(tmp_path / "ada.ipynb")


def _zip_with(path, data: bytes, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compress) as archive:
        archive.writestr("lab.ipynb", data)
    return path


def _corrupt(path, how: str):
    """A damaged zip, each as an editor or a hand could make it: a flipped byte of the member's data (its CRC
    fails), the encryption flag set, a compression method no reader has, a declared size smaller than the data."""
    raw = bytearray(path.read_bytes())
    header = raw.index(b"PK\x03\x04")
    central = raw.index(b"PK\x01\x02")
    if how == "bad CRC":
        raw[header + 30 + len("lab.ipynb") + 5] ^= 0xFF
    elif how == "encrypted":
        raw[header + 6] |= 1
        raw[central + 8] |= 1
    elif how == "method 9":
        raw[header + 8] = raw[central + 10] = 9
    elif how == "size that lies":
        struct.pack_into("<I", raw, header + 22, 10)
        struct.pack_into("<I", raw, central + 24, 10)
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("how", ["bad CRC", "encrypted", "method 9", "size that lies"])
def test_a_damaged_zip_is_the_students_error_naming_its_member(tmp_path, how):
    """Every way a zip's member cannot be unpacked is the student's doing (an error row, its 0 stands), never the
    grader failing: a bad CRC, encryption, an unknown compression, a size that lies."""
    data = json.dumps(_notebook(5, ["a", "b"])).encode() * 3
    path = _corrupt(_zip_with(tmp_path / "ada.zip", data, zipfile.ZIP_STORED if how == "bad CRC" else zipfile.ZIP_DEFLATED), how)
    with pytest.raises(SubmissionError, match=r"ada\.zip(:lab\.ipynb cannot be unpacked| is not a valid zip|: file lab\.ipynb is compressed with method 9)"):
        load(path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    """A FIFO named like a notebook (a tarball can hold one) is never waited on: open(2) of a FIFO blocks until a
    writer comes, and none will."""
    fifo = tmp_path / "ada.ipynb"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            load(fifo)
        except SubmissionError as err:
            outcome.append(str(err))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "load() waited on the FIFO"
    assert outcome and "not a regular file" in outcome[0]


def test_a_sparse_file_past_the_bound_is_refused_by_its_size_and_never_hashed(tmp_path, monkeypatch):
    """A 50 GB sparse file costs nothing on disk and a minute to read: it is refused by its size, and the batch's
    content hash takes its size instead of its bytes."""
    from attn_ref.grade.classroom import discover

    sparse = tmp_path / "ada.ipynb"
    with open(sparse, "wb") as f:
        f.truncate(50 << 30)
    read = []
    monkeypatch.setattr(discover, "hash_into", lambda digest, path: read.append(path))
    digest = discover.content_hash(sparse)
    with open(sparse, "wb") as f:
        f.truncate(60 << 30)
    assert read == [] and digest != discover.content_hash(sparse)  # another size: another hash, still unread
    with pytest.raises(SubmissionError, match="61440 MB"):
        load(sparse)
