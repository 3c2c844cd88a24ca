"""Reading a submission's notebook (attn_ref/grade/submission.py): what editors write is read as it is."""

from __future__ import annotations

import json
import warnings

import nbformat
import pytest

from attn_ref.grade.submission import load


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
    assert len({cell.id for cell in nb.cells}) == len(ids)  # repaired: every cell its own id


@pytest.mark.parametrize("data", [b"", b"\n  \r\n"], ids=["0 bytes", "blank lines"])
def test_an_empty_file_is_said_to_be_empty(tmp_path, data):
    """A notebook whose save never finished, or an upload of nothing: the status says so in plain words."""
    from attn_ref.grade.submission import SubmissionError

    (tmp_path / "ada.ipynb").write_bytes(data)
    with pytest.raises(SubmissionError, match=rf"^ada\.ipynb is empty \({len(data)} bytes\): no notebook was saved in it$"):
        load(tmp_path / "ada.ipynb")
