"""The trusted side as a careful custodian: student text that cannot forge a line or hide a character, a
spreadsheet cell that cannot start a formula, a Canvas row that belongs to exactly one student, an export
unpacked with bounds, results that are their submission's own, and no key left for the next kernel.

The attacks of a whole class, run as root through the command line (what the grader writes on disk, who can
read it, and every output at once), are in tests/end_to_end/test_root_batch.py.
"""

from __future__ import annotations

import csv
import ctypes
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import hidden_characters, json_strings
from hypothesis import given
from hypothesis import strategies as st

from attn_ref.grade.inkernel.text import plain_lines, plain_text
from attn_ref.grade.student_python import BOUNDS

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as on Gradescope and in CI")
HOSTILE_TEXT = "a\nb\rc\x1b[2Jd\x07\x08\x00e\x9b31m\u202eevil\u2066\u200bf\u2028g\ufeffh\ud800i\x7f"


# ---- one rule for student text -------------------------------------------------------------------------

def test_the_text_rule_on_each_kind_of_hidden_character():
    assert plain_text(HOSTILE_TEXT) == "a?b?c?[2Jd???e?31m?evil??f?g?h?i?"
    assert plain_lines("one\r\ntwo\tthree\rfour\u2029") == "one\ntwo\tthree?four?"
    assert plain_text("Zoë Ångström 中文 😀 O'Brien") == "Zoë Ångström 中文 😀 O'Brien"  # what is visible stays


@given(st.text(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\u202e", "\x9b", "\r", "\u2029"]))))
def test_nothing_hidden_passes_the_text_rule(text):
    assert not hidden_characters(plain_text(text)) and len(plain_text(text)) == len(text)
    assert not hidden_characters(plain_lines(text), lines=True)
    plain_text(text).encode("utf-8")  # always encodable: no lone surrogate left to raise


def test_a_students_message_cannot_begin_a_line_of_the_results():
    from attn_ref.grade.checks_json import QuestionUnit
    from attn_ref.grade.results import entry

    unit = QuestionUnit("q1", title="A question")
    forged = "boom\n✓ q1: FORGED (3/3)\r\n✓ FORGED (3/3)\u2028✓ FORGED"
    output = entry(unit, [(False, "the value", 3, f"raised ValueError: {forged}"), (True, "the type", 1, "")], "visible").output
    lines = output.split("\n")
    assert len(lines) == 2 and lines[0].startswith("✗ the value (0/3): raised ValueError: boom?✓ q1: FORGED")
    assert lines[1] == "✓ the type (1/1)"


def test_results_on_disk_hold_no_hidden_character_wherever_it_was_put(tmp_path):
    from attn_ref.grade.results import write_results

    results = {"score": 1.0, "output": f"line one\n{HOSTILE_TEXT}",
               "tests": [{"name": HOSTILE_TEXT, "output": f"✗ x (0/1): {HOSTILE_TEXT}"}],
               "extra_data": {"variant": {"declared": HOSTILE_TEXT, "graded_as": "\ud800"}, HOSTILE_TEXT: [HOSTILE_TEXT]}}
    write_results(tmp_path / "r.json", results)
    raw = (tmp_path / "r.json").read_bytes()
    written = json.loads(raw.decode("utf-8"))  # valid UTF-8: a lone surrogate no longer stops the write
    for key, text in json_strings(written):
        assert not hidden_characters(text, lines=key == "output"), (key, text)
    assert written["output"].startswith("line one\n") and (tmp_path / "r.json").stat().st_mode & 0o777 == 0o600


def test_an_identity_with_hidden_characters_is_shown_plain():
    from attn_ref.grade.scoring.whose_variant import Basis, GradedIdentity, explained

    line = explained(GradedIdentity("\x1b]0;x\x07ana@uni.edu\u202e", Basis.UNVERIFIED, "\x1b]0;x\x07ana@uni.edu\u202e"), {})
    assert not hidden_characters(line) and "?]0;x?ana@uni.edu?" in line


# ---- the CSV neutraliser (OWASP, ASVS) ---------------------------------------------------------------------

@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r", "\n", "\0", "\v", "\f", "\xa0", " ", "\u3000", "\u200b",
                                   "\u202e", "\x1b", "\x9b", "＝", "＋", "－", "＠", "﹦", "﹢", "﹣", "⁼", " =", "\t=", "\xa0@"])
def test_no_cell_can_start_a_formula(tmp_path, start):
    from attn_ref.grade.classroom.spreadsheet import needs_escape, write_csv

    write_csv(tmp_path / "t.csv", ["cell"], [[start + "HYPERLINK(\"x.test\")"]])
    with open(tmp_path / "t.csv", newline="", encoding="utf-8-sig") as f:
        (_, (cell,)) = list(csv.reader(f))
    assert not needs_escape(cell) and not hidden_characters(cell), repr(cell)
    assert cell.startswith(("'", "?")) and needs_escape(start + "x")  # a Canvas ID so written is refused instead


# ---- a Canvas row belongs to exactly one student ---------------------------------------------------------

ROSTER = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section"],
          ["Bob", "101", "S1", "bob", "A"],
          ["Carol", "102", "S2", "carol@uni.edu", "A"],
          ["Hal", "S6", "S7", "hal", "A"],  # a Canvas ID that is another student's SID (Ivy's)
          ["Ivy", "106", "S6", "ivy", "A"],
          ["Erin", "", "", "erin@uni.edu", "A"],  # no ID and no SIS User ID: two such rows share no key
          ["Finn", "", "", "finn@uni.edu", "A"],
          ["Gus", "105", "S5", "gus", "A"],
          ["Kate", "107", "S8", "kate", "A"]]


def _graded(key: str, total: float | None, *people: dict):
    students = [{"name": "", "sid": "", "email": "", **p} for p in people]
    from attn_ref.grade.classroom.discover import Submission

    sub = Submission(key, Path(f"{key}.ipynb"), students)
    return SimpleNamespace(sub=sub, total=total, adjusted_total=total, has_grade=total is not None, status="ok")


def _canvas(tmp_path: Path, graded: list, login_domain: str | None = None, roster_rows: list | None = None
            ) -> tuple[dict, dict, list[str]]:
    from attn_ref.grade.classroom.canvas import write_canvas

    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(roster_rows or ROSTER)
    book = SimpleNamespace(graded=graded, checks=SimpleNamespace(title="Lab", assignment="lab"), notes=[], units=["c1"],
                           written_units=[], maximum=lambda unit: 80.0)
    warnings = write_canvas(tmp_path, book, roster, "Lab (1)", login_domain)
    with open(tmp_path / "canvas.csv", newline="", encoding="utf-8-sig") as f:
        scores = {row["Student"]: row["Lab (1)"] for row in csv.DictReader(f) if row["Student"] != "Points Possible"}
    unmatched = {}
    if (tmp_path / "canvas-unmatched.csv").exists():
        with open(tmp_path / "canvas-unmatched.csv", newline="", encoding="utf-8-sig") as f:
            unmatched = {row["name"]: row["reason"] for row in csv.DictReader(f)}
    return scores, unmatched, warnings


def test_a_login_never_matches_the_user_part_of_an_address_of_another_domain(tmp_path):
    graded = [_graded("bob", 80, {"name": "Bob", "sid": "S1", "email": "bob@uni.edu"}),
              _graded("mallory", 0, {"name": "Mallory", "email": "bob@elsewhere.example"})]
    scores, unmatched, warnings = _canvas(tmp_path, graded)
    assert scores["Bob"] == "80" and "Mallory" in unmatched and warnings
    scores, unmatched, _ = _canvas(tmp_path, graded, login_domain="uni.edu")  # the domain named: still not hers
    assert scores["Bob"] == "80" and "no roster row" in unmatched["Mallory"]


def test_the_user_part_matches_only_with_the_rosters_domain(tmp_path):
    graded = [_graded("gus", 70, {"name": "Gus", "email": "GUS@uni.edu"})]
    assert _canvas(tmp_path, graded)[0]["Gus"] == ""
    assert _canvas(tmp_path, graded, login_domain="uni.edu")[0]["Gus"] == "70"
    full = [_graded("carol", 60, {"name": "Carol", "email": "Carol@Uni.edu"})]  # a full login: any case
    assert _canvas(tmp_path, full)[0]["Carol"] == "60"


def test_a_sid_is_a_canvas_id_only_in_a_roster_without_sis_ids(tmp_path):
    """Else a SID that is one student's SIS ID could name another's Canvas ID (Hal's is S6, Ivy's SIS ID)."""
    scores, unmatched, _ = _canvas(tmp_path, [_graded("x", 50, {"name": "Xena", "sid": "101"}),  # Bob's Canvas ID
                                              _graded("h", 40, {"name": "Hal", "sid": "S7"}),
                                              _graded("i", 30, {"name": "Ivy", "sid": "S6"})])
    assert scores["Bob"] == "" and scores["Hal"] == "40" and scores["Ivy"] == "30" and "no roster row" in unmatched["Xena"]
    without_sis = [[*row[:2], "" if i else row[2], *row[3:]] for i, row in enumerate(ROSTER)]
    scores, unmatched, _ = _canvas(tmp_path, [_graded("x", 50, {"name": "Xena", "sid": "101"})], roster_rows=without_sis)
    assert scores["Bob"] == "50" and not unmatched


def test_logins_match_in_ascii_case_only_and_an_address_has_one_at(tmp_path):
    """ſ (long s), ﬁ (a ligature) and K (the Kelvin sign) fold to other letters: different logins. So does
    bob@uni.edu@uni.edu, whatever its user part."""
    graded = [_graded("s", 10, {"name": "Long s", "email": "ſarol@uni.edu"}), _graded("k", 20, {"name": "Kelvin", "email": "\u212aate"}),
              _graded("f", 30, {"name": "Fi", "email": "ﬁnn@uni.edu"}), _graded("b", 40, {"name": "At at", "email": "bob@uni.edu@uni.edu"})]
    scores, unmatched, _ = _canvas(tmp_path, graded, login_domain="uni.edu")
    assert scores["Carol"] == scores["Finn"] == scores["Bob"] == "" and set(unmatched) == {"Long s", "Kelvin", "Fi", "At at"}


def test_two_members_of_one_group_naming_one_row_are_listed(tmp_path):
    scores, unmatched, _ = _canvas(tmp_path, [_graded("g", 75, {"name": "Bob", "sid": "S1"}, {"name": "Bobby", "email": "bob"})])
    assert scores["Bob"] == "75" and "as does 'Bob' of the same submission" in unmatched["Bobby"]


def test_a_sid_and_an_email_naming_two_rows_match_neither(tmp_path):
    scores, unmatched, _ = _canvas(tmp_path, [_graded("x", 50, {"name": "Xena", "sid": "S1", "email": "carol@uni.edu"})])
    assert scores["Bob"] == scores["Carol"] == "" and "ambiguous" in unmatched["Xena"]


def test_a_row_another_student_names_among_several_gets_no_score(tmp_path):
    """Xena's SID is Bob's and her email Carol's login: she matches neither, and Carol's own claim (by SID) no longer
    fills a row that Xena's email names too; whose row it is, is not known."""
    scores, unmatched, _ = _canvas(tmp_path, [_graded("x", 50, {"name": "Xena", "sid": "S1", "email": "carol@uni.edu"}),
                                              _graded("c", 60, {"name": "Carol", "sid": "S2"})])
    assert scores["Bob"] == scores["Carol"] == "" and "ambiguous" in unmatched["Xena"]
    assert "is named by another submitted student too" in unmatched["Carol"]


def test_two_submissions_matching_one_row_are_both_left_out(tmp_path):
    scores, unmatched, warnings = _canvas(tmp_path, [_graded("a", 80, {"name": "Bob", "sid": "S1"}),
                                                     _graded("b", 0, {"name": "Bob again", "email": "BOB"})],
                                          login_domain=None)
    # "BOB" is a full login (any case): two submissions claim Bob's row, so it stays empty and both are listed
    assert scores["Bob"] == "" and set(unmatched) == {"Bob", "Bob again"}
    assert all("2 submissions match the roster row 'Bob'" in why for why in unmatched.values()) and warnings


def test_rows_without_canvas_ids_keep_their_own_scores(tmp_path):
    scores, unmatched, _ = _canvas(tmp_path, [_graded("e", 10, {"name": "Erin", "email": "erin@uni.edu"}),
                                              _graded("f", 20, {"name": "Finn", "email": "finn@uni.edu"})])
    assert scores["Erin"] == "10" and scores["Finn"] == "20" and not unmatched


def test_a_group_fills_each_members_own_row(tmp_path):
    scores, unmatched, _ = _canvas(tmp_path, [_graded("g", 75, {"name": "Bob", "sid": "S1"}, {"name": "Gus", "sid": "S5"})])
    assert scores["Bob"] == scores["Gus"] == "75" and not unmatched


def test_a_student_in_two_submissions_is_warned_about(tmp_path):
    from attn_ref.grade.checks_json import Checks, QuestionUnit
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import Gradebook, Graded, shared_students

    ada = {"name": "Ada", "sid": "", "email": "Ada@uni.edu"}
    subs = [Submission("s1", tmp_path, [ada]), Submission("s2", tmp_path, [{**ada, "email": "ada@uni.edu"}]),
            Submission("s3", tmp_path, [{"name": "Bo", "sid": "9", "email": ""}])]
    book = Gradebook(Checks("practice", (QuestionUnit("q1"),)), [Graded(s, {}, {}) for s in subs])
    (warning,) = shared_students(book)
    assert warning.startswith("ada@uni.edu is a student of 2 submissions (s1, s2)")


# ---- an export unpacked with bounds ------------------------------------------------------------------------

def _notebook_bytes(assignment: str = "lab") -> bytes:
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"otter": {"assignment_name": assignment}})
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    return nbformat.writes(nb).encode()


def _export(path: Path, members: dict[str, bytes | int], metadata: dict | None = None, lie: dict | None = None) -> Path:
    """An export zip: each member its bytes, or a number of zero bytes streamed in (a bomb), under
    assignment_export/; ``lie``: {member: the size its headers declare}."""
    folders = sorted({name.split("/")[0] for name in members})
    metadata = metadata or {f: {":submitters": [{":name": f, ":sid": f, ":email": f"{f}@uni.edu"}]} for f in folders}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("assignment_export/submission_metadata.yml", yaml.safe_dump(metadata))
        for name, content in members.items():
            if isinstance(content, int):
                with archive.open(f"assignment_export/{name}", "w") as f:
                    chunk = bytes(16 << 20)
                    for _ in range(content // len(chunk)):
                        f.write(chunk)
            else:
                archive.writestr(f"assignment_export/{name}", content)
    for name, size in (lie or {}).items():
        _declare(path, f"assignment_export/{name}", size)
    return path


def _declare(path: Path, member: str, size: int) -> None:
    """Rewrite a member's declared size in its local header and the central directory (a lying zip)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        local = archive.getinfo(member).header_offset
    assert data[local:local + 4] == b"PK\x03\x04"
    data[local + 22:local + 26] = size.to_bytes(4, "little")
    central = 0
    while True:
        central = data.index(b"PK\x01\x02", central)
        length = int.from_bytes(data[central + 28:central + 30], "little")
        if bytes(data[central + 46:central + 46 + length]) == member.encode():
            data[central + 24:central + 28] = size.to_bytes(4, "little")
            break
        central += 4
    path.write_bytes(bytes(data))


def test_a_zip_bomb_in_an_export_is_that_submissions_error_and_the_class_goes_on(tmp_path):
    """A 1 GiB member (a few MB zipped) is refused from the sizes the zip declares, before anything is
    written; the grader's memory stays small (measured in a process of its own)."""
    export = _export(tmp_path / "export.zip", {"submission_1/lab.ipynb": _notebook_bytes(),
                                               "submission_2/lab.ipynb": 1 << 30})
    assert export.stat().st_size < 8 << 20
    # the peak is VmHWM, this program's own: ru_maxrss would count the memory of the test worker it was forked from
    probe = ("import json, re, sys\nfrom pathlib import Path\nfrom attn_ref.grade.classroom.discover import discover\n"
             "subs = discover(Path(sys.argv[1]), Path(sys.argv[2]))\n"
             "peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)) << 10\n"
             "print(json.dumps({'subs': [[s.key, s.problem, s.fault.value] for s in subs], 'peak': peak}))")
    done = subprocess.run([sys.executable, "-c", probe, str(export), str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    (_, ok, _), (_, bomb, fault) = found["subs"]
    assert ok == "" and fault == "student" and "1024 MB unpacked; a file may be at most 64 MB" in bomb
    written = sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written < 1 << 20 and found["peak"] < 200 << 20, (written, found["peak"])


def test_a_member_that_lies_about_its_size_is_stopped_at_what_it_declared(tmp_path):
    from attn_ref.grade.classroom.discover import discover

    export = _export(tmp_path / "export.zip", {"submission_1/lab.ipynb": _notebook_bytes(),
                                               "submission_2/lab.ipynb": 48 << 20},
                     lie={"submission_2/lab.ipynb": 1000})
    subs = {s.key: s for s in discover(export, tmp_path / "out")}
    assert subs["submission_1"].problem == "" and (subs["submission_1"].path / "lab.ipynb").is_file()
    assert "could not be unpacked" in subs["submission_2"].problem or "inflates past" in subs["submission_2"].problem
    assert subs["submission_2"].fault.value == "student" and not subs["submission_2"].path.exists()
    again = {s.key: s for s in discover(export, tmp_path / "out")}  # unpacked once: the reason is kept
    assert again["submission_2"].problem == subs["submission_2"].problem


def test_an_export_past_its_own_bounds_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    from attn_ref.grade.classroom import unpack
    from attn_ref.grade.classroom.discover import discover
    from attn_ref.grade.scoring.autograder import AutograderError

    export = _export(tmp_path / "export.zip", {f"submission_{i}/lab.ipynb": _notebook_bytes() for i in range(5)})
    monkeypatch.setattr(unpack, "MAX_EXPORT_MEMBERS", 4)
    with pytest.raises(AutograderError, match="at most 4 are"):
        discover(export, tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.ipynb"))
    monkeypatch.setattr(unpack, "MAX_EXPORT_MEMBERS", 100)
    monkeypatch.setattr(unpack, "MAX_SUBMISSION_FILES", 1)
    many = _export(tmp_path / "many.zip", {"submission_1/lab.ipynb": _notebook_bytes(), "submission_1/b.txt": b"x",
                                           "submission_2/lab.ipynb": _notebook_bytes()})
    subs = {s.key: s for s in discover(many, tmp_path / "out2")}
    assert "it holds 2 files; a submission may hold at most 1" in subs["submission_1"].problem
    assert subs["submission_2"].problem == ""


def test_odd_members_cost_only_their_own_submission_and_nothing_lands_outside(tmp_path):
    """A file where a folder must be, a member named twice, links, "..": refused or skipped, never followed;
    of the export's own files only its metadata is written."""
    from attn_ref.grade.classroom.discover import discover

    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("e/submission_metadata.yml", yaml.safe_dump({f"s{i}": {":submitters": []} for i in range(1, 5)}))
        archive.writestr("e/stray.bin", bytes(1 << 20))
        archive.writestr("e/s1/x", b"a file")
        archive.writestr("e/s1/x/lab.ipynb", _notebook_bytes())
        archive.writestr("e/s2/lab.ipynb", _notebook_bytes())
        archive.writestr("e/s2/lab.ipynb", _notebook_bytes())  # twice (zipfile warns, and writes it)
        link = zipfile.ZipInfo("e/s3/lab.ipynb")
        link.external_attr = (0o120777 << 16)
        archive.writestr(link, "/etc/shadow")
        archive.writestr("e/s4/../../../escaped.ipynb", _notebook_bytes())
        archive.writestr("e/s4/lab.ipynb", _notebook_bytes())
    subs = {s.key: s for s in discover(export, tmp_path / "out")}
    assert "could not be unpacked" in subs["s1"].problem and "could not be unpacked" in subs["s2"].problem
    assert not (subs["s3"].path / "lab.ipynb").exists()  # a link is never written
    assert subs["s4"].problem == "" and (subs["s4"].path / "lab.ipynb").is_file()
    assert not list(tmp_path.rglob("escaped.ipynb")) and not list(tmp_path.rglob("stray.bin"))


def test_export_keys_stay_inside_the_export_and_never_share_results(tmp_path):
    from attn_ref.grade.classroom.discover import discover

    export = tmp_path / "export"
    for name in ("a b", "a_b", "c"):
        (export / name).mkdir(parents=True)
        (export / name / "lab.ipynb").write_bytes(_notebook_bytes())
    people = [{":name": "P", ":sid": "1", ":email": "p@uni.edu"}]
    metadata = {k: {":submitters": people} for k in ("a b", "a_b", "c", "/etc", "..", "../c", "")}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    subs = discover(export, tmp_path / "out")
    keys = [s.key for s in subs]
    assert len(set(keys)) == len(keys) == 7
    for sub in subs:
        inside = sub.path.resolve().is_relative_to(export.resolve()) and sub.path.resolve() != export.resolve()
        assert inside or "not the name of a folder inside it" in sub.problem, (sub.key, sub.path)


def test_a_folder_the_exports_metadata_does_not_list_is_a_row_that_says_so(tmp_path):
    """A submission's folder that submission_metadata.yml forgot is never dropped in silence: it is a row with no
    grade saying why (no student is named for it); a folder with no notebook, or a hidden one, is no row."""
    from attn_ref.grade.classroom.discover import discover
    from attn_ref.grade.results import Outcome

    export = tmp_path / "export"
    for name in ("submission_1", "submission_2000", ".cache", "notes"):
        (export / name).mkdir(parents=True)
    for name in ("submission_1", "submission_2000", ".cache"):
        (export / name / "lab.ipynb").write_bytes(_notebook_bytes())
    (export / "notes" / "readme.txt").write_text("x")
    people = [{":name": "P", ":sid": "1", ":email": "p@uni.edu"}]
    (export / "submission_metadata.yml").write_text(yaml.safe_dump({"submission_1": {":submitters": people}}))
    subs = {s.key: s for s in discover(export, tmp_path / "out")}
    assert sorted(subs) == ["submission_1", "submission_2000"] and subs["submission_1"].problem == ""
    forgotten = subs["submission_2000"]
    assert "does not list the folder submission_2000" in forgotten.problem and forgotten.fault is Outcome.NOT_GRADED
    assert forgotten.students == []


def test_a_submission_listed_twice_names_every_submitter_and_is_not_graded(tmp_path):
    """YAML forbids a key twice; a plain loader kept the last entry alone, and the first entry's student vanished
    from every file. Both entries' students are named in a row that says why it has no grade."""
    from attn_ref.grade.classroom.discover import discover

    export = tmp_path / "export"
    for name in ("submission_1", "submission_2"):
        (export / name).mkdir(parents=True)
        (export / name / "lab.ipynb").write_bytes(_notebook_bytes())
    (export / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters: [{':name': First, ':sid': '1'}]\n"
        "submission_2:\n  :submitters: [{':name': Other, ':sid': '3'}]\n  :score: 1\n  :score: 9\n"
        "submission_1:\n  :submitters: [{':name': Second, ':sid': '2'}]\n")
    subs = {s.key: s for s in discover(export, tmp_path / "out")}
    assert sorted(subs) == ["submission_1", "submission_2"]
    assert "lists submission_1 2 times" in subs["submission_1"].problem
    assert [p["name"] for p in subs["submission_1"].students] == ["First", "Second"]
    assert "gives ':score' more than once" in subs["submission_2"].problem
    assert [p["name"] for p in subs["submission_2"].students] == ["Other"]


def test_a_file_names_accents_reach_the_row_its_key_stays_plain(tmp_path):
    """A plain class folder's row is named as the file is (José Núñez), through the one text rule; only the
    key (results/<key>.json) keeps to safe characters; two names alike keep two keys."""
    from attn_ref.grade.classroom.discover import discover

    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("José Núñez.ipynb", "josé núñez.ipynb", "Zoë\u202e.ipynb"):
        (folder / name).write_bytes(_notebook_bytes())
    subs = {s.shown_name: s for s in discover(folder, tmp_path / "out")}
    assert sorted(subs) == ["José Núñez", "Zoë?", "josé núñez"]  # the bidi override replaced by the text rule
    assert subs["José Núñez"].key == "Jos_N_ez" and subs["josé núñez"].key.startswith("jos_n_ez-")
    assert [m.name for m in subs["José Núñez"].members] == ["José Núñez"]


def test_a_malformed_entry_or_a_link_costs_only_its_own_submission(tmp_path):
    """An entry that is not a mapping, one submission that is a link to the TA's files, aliases that make one
    list of submitters every entry's: each is that submission's problem, bounded, never followed."""
    from attn_ref.grade.classroom.discover import discover
    from attn_ref.grade.intake.metadata import MAX_SUBMITTERS
    from attn_ref.grade.scoring.autograder import AutograderError

    export, private = tmp_path / "export", tmp_path / "ta_private"
    private.mkdir()
    (private / "solution.ipynb").write_bytes(_notebook_bytes())
    for name in ("s1", "s2"):
        (export / name).mkdir(parents=True)
        (export / name / "lab.ipynb").write_bytes(_notebook_bytes())
    (export / "s3").symlink_to(private)
    many = "\n".join(f"  - {{':name': n{i}, ':sid': '{i}'}}" for i in range(400))
    (export / "submission_metadata.yml").write_text(f"s1: hello\ns2:\n  :submitters: &all\n{many}\ns3:\n  :submitters: *all\n")
    subs = {s.key: s for s in discover(export, tmp_path / "out")}
    assert "is not a mapping" in subs["s1"].problem and subs["s1"].students == []
    assert subs["s2"].problem.startswith("the export names 400 submitters for s2, more than the 50")  # not graded,
    assert len(subs["s2"].students) == MAX_SUBMITTERS  # and said so: before, the rest vanished from every file
    assert "is a link, which is never followed" in subs["s3"].problem
    (export / "submission_metadata.yml").unlink()
    (export / "submission_metadata.yml").mkdir()
    with pytest.raises(AutograderError, match="is not a file"):
        discover(export, tmp_path / "out")
    (export / "submission_metadata.yml").rmdir()
    assert [s.key for s in discover(export, tmp_path / "out")] == ["s1", "s2"]  # a class folder: the link is not listed
    with pytest.raises(AutograderError, match="neither a folder"):
        discover(export / "s1" / "lab.ipynb", tmp_path / "out")


def test_names_from_an_export_reach_the_gradebook_plain(tmp_path):
    from attn_ref.grade.classroom.discover import discover

    export = tmp_path / "export"
    (export / "s1").mkdir(parents=True)
    (export / "s1" / "lab.ipynb").write_bytes(_notebook_bytes())
    hostile = {":name": "Eve\n9 submissions ok\u202e", ":sid": "\x00\x0b1", ":email": "\x1b[2Je@uni.edu"}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump({"s1": {":submitters": [hostile]}}))
    (sub,) = discover(export, tmp_path / "out")
    assert sub.students == [{"name": "Eve?9 submissions ok?", "sid": "??1", "email": "?[2Je@uni.edu"}]


# ---- results that are their submission's own ---------------------------------------------------------------

def test_results_of_other_files_are_no_ones_grade(tmp_path):
    from attn_ref.grade.checks_json import Checks, QuestionUnit
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import collect
    from attn_ref.grade.results import CONTENT_HASH, write_results

    checks = Checks("practice", (QuestionUnit("q1"),))
    tests = [{"name": "q1: Q", "score": 1.0, "max_score": 1.0}]
    for key, digest in (("mine", "abc"), ("stale", "old"), ("moved", "def")):
        write_results(tmp_path / "results" / f"{key}.json",
                      {"tests": tests, "extra_data": {"submission": "elsewhere" if key == "moved" else key, CONTENT_HASH: digest}})
    subs = [Submission("mine", tmp_path / "mine.ipynb", content="abc"), Submission("stale", tmp_path / "s.ipynb", content="new"),
            Submission("moved", tmp_path / "m.ipynb", content="def")]
    book = collect(tmp_path, subs, checks)
    assert [g.has_grade for g in book.graded] == [True, False, False]
    assert [g.status for g in book.graded][1:] == ["not graded yet", "not graded yet"]


def test_a_score_typed_twice_for_one_student_is_given_to_no_one_and_kept(tmp_path):
    from attn_ref.grade.checks_json import Checks, QuestionUnit, WrittenPart
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.classroom.gradebook import Gradebook, Graded
    from attn_ref.grade.classroom.written_pages import SHEET, merge_written_scores

    checks = Checks("practice", (QuestionUnit("q1"),), (WrittenPart("q2", points=1),))
    sub = Submission("s1", tmp_path / "s1.ipynb", [{"name": "Ada", "sid": "7", "email": "ada@uni.edu"}])
    book = Gradebook(checks, [Graded(sub, {"extra_data": {"status": "ok"}}, {"q1": 1.0})])
    sheet = tmp_path / SHEET
    sheet.write_text("submission,name,sid,email,q2_written\ns1.ipynb,Ada,7,ada@uni.edu,1\ns1.ipynb,Ada,7,ada@uni.edu,0\n")
    before = sheet.read_bytes()
    warnings = merge_written_scores(tmp_path, book)
    assert book.graded[0].written == {"q2_written": None} and any("2 rows are theirs" in w for w in warnings)
    assert sheet.read_bytes() == before  # nothing the TA typed is lost


def _sheet_book(tmp_path: Path, students: list[tuple[str, dict]], sheet: str):
    from attn_ref.grade.checks_json import Checks, QuestionUnit, WrittenPart
    from attn_ref.grade.classroom.discover import Submission, label
    from attn_ref.grade.classroom.gradebook import Gradebook, Graded
    from attn_ref.grade.classroom.written_pages import SHEET

    checks = Checks("practice", (QuestionUnit("q1"),), (WrittenPart("q2", points=5),))
    subs = label([Submission(f"k{i}", tmp_path / folder, [{"name": "", "sid": "", "email": "", **person}])
                  for i, (folder, person) in enumerate(students)])
    (tmp_path / SHEET).write_text(sheet, encoding="utf-8")
    return Gradebook(checks, [Graded(sub, {"extra_data": {"status": "ok"}}, {"q1": 1.0}) for sub in subs]), tmp_path / SHEET


def test_typed_scores_survive_a_spreadsheet_an_added_sid_and_a_resubmission(tmp_path):
    from attn_ref.grade.classroom.written_pages import merge_written_scores

    header = "submission,name,sid,email,q2_written\n"
    book, sheet = _sheet_book(tmp_path, [("s1", {"name": "Ada", "sid": "00123"}), ("s2", {"name": "Bo", "sid": "9", "email": "bo@uni.edu"}),
                                         ("s4", {"name": "Cy"})],
                              header + "s1,Ada,123,,4\ns2,Bo,,BO@uni.edu,3\ns3,Cy,,,5\n")  # a sheet saved by a spreadsheet
    warnings = merge_written_scores(tmp_path, book)
    assert [g.written["q2_written"] for g in book.graded] == [4, 3, None]  # leading zeros, a SID added since
    assert any("1 row(s) with typed scores match no student" in w for w in warnings)
    with open(sheet, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    assert [(r["submission"], r["q2_written"]) for r in rows] == [("s1", "4"), ("s2", "3"), ("s4", ""), ("s3", "5")]  # kept


def test_two_submissions_whose_names_read_alike_never_share_a_typed_score(tmp_path):
    from attn_ref.grade.classroom.written_pages import merge_written_scores

    book, sheet = _sheet_book(tmp_path, [("sub\x01", {"name": "Ann"}), ("sub\x02", {"name": "Ann"})],
                              "submission,name,sid,email,q2_written\nsub? (k0),Ann,,,5\n")
    merge_written_scores(tmp_path, book)
    assert [g.sub.file_name for g in book.graded] == ["sub? (k0)", "sub? (k1)"]
    assert [g.written["q2_written"] for g in book.graded] == [5, None]


# ---- owner-only, whatever the umask ------------------------------------------------------------------------

def test_what_the_grader_writes_is_its_owners_alone_whatever_the_umask(tmp_path):
    from attn_ref.grade.owned import open_private, private_folder, tighten, write_private

    old = os.umask(0)
    try:
        private_folder(tmp_path / "out" / "a" / "b")
        write_private(tmp_path / "out" / "c" / "f.txt", b"x")
        os.close(open_private(tmp_path / "out" / "lock"))
        (tmp_path / "out" / "results").mkdir(mode=0o777)
        (tmp_path / "out" / "results" / "old.json").write_text("{}")
        (tmp_path / "out" / "notes.txt").write_text("the TA's own")
        os.chmod(tmp_path / "out" / "notes.txt", 0o644)
        tighten(tmp_path / "out", ("results",))
    finally:
        os.umask(old)
    for path in [tmp_path / "out", *(tmp_path / "out").rglob("*")]:
        mode = path.lstat().st_mode & 0o777
        if path.name == "notes.txt":
            assert mode == 0o644  # not the grader's: untouched
        else:
            assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


# ---- keyrings ---------------------------------------------------------------------------------------------

ADD_KEY = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine)
KEY_SPEC_USER_KEYRING = -4


def _add_key_as(uid: int, bounded: bool) -> tuple[int, int]:
    """In a child as ``uid`` (with the kernel's bounds first, where ``bounded``): add_key's result and errno."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            if bounded:
                sys.path.insert(0, str(BOUNDS.parent))
                import launch_bounds

                launch_bounds.apply({"limits": {}, "deny_network": True})
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            libc = ctypes.CDLL(None, use_errno=True)
            result = libc.syscall(ADD_KEY, b"user", b"left-for-the-next-kernel", b"x", 1, ctypes.c_int(KEY_SPEC_USER_KEYRING))
            os.write(write, json.dumps([result, ctypes.get_errno()]).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as f:
        return tuple(json.loads(f.read() or "[-2, 0]"))


@ROOT_ONLY
@pytest.mark.skipif(ADD_KEY is None or not Path("/proc/key-users").exists(), reason="no keyrings on this machine")
def test_a_kernel_can_leave_no_key_and_no_uid_with_keys_is_drawn(monkeypatch):
    import errno

    from attn_ref.grade.isolation import cleanup

    # a pair of uids with no key yet: the leaked key below outlives this test, and an earlier run's may be there
    taken = cleanup.uids_with_keys()
    uid = next(u for u in range(3_990_000 + os.getpid() % 1000, 3_999_000) if not {u, u + 1} & taken)
    result, code = _add_key_as(uid, bounded=True)  # a kernel: the seccomp filter fails every keyring call
    assert result == -1 and code == errno.ENOSYS and uid not in cleanup.uids_with_keys()
    leaked = uid + 1
    result, _ = _add_key_as(leaked, bounded=False)  # without the filter (no libseccomp) a key outlives its process
    if result < 0:
        pytest.skip("this machine refuses keys even without the filter")
    assert leaked in cleanup.uids_with_keys()
    monkeypatch.setenv(cleanup.UID_RANGE_ENV, f"{leaked}-{leaked}")
    with pytest.raises(OSError, match="no free kernel uid"):
        cleanup.claim_uid()  # that uid is never drawn while its key exists


def test_a_roster_a_spreadsheet_saved_again_is_refused_with_the_file_and_the_fix(tmp_path):
    """Excel on Windows saves a roster in its own encoding, or with ';' where the locale writes decimal commas: the
    run stops before grading, naming the file and what to do, never with a bare codec error."""
    from attn_ref.grade.classroom.canvas import RosterError, read_roster

    text = "\n".join(",".join(row) for row in ROSTER[:1] + [["Zoë Ångström", "103", "S3", "zoe", "A"]]) + "\n"
    (tmp_path / "latin1.csv").write_bytes(text.encode("latin-1"))
    (tmp_path / "semicolons.csv").write_text(text.replace(",", ";"), encoding="utf-8")
    (tmp_path / "as_canvas.csv").write_text("\ufeff" + text.replace("\n", "\r\n"), encoding="utf-8")
    with pytest.raises(RosterError, match=r"latin1\.csv: not UTF-8 \(byte \d+ is not\).*save it as 'CSV UTF-8'"):
        read_roster(tmp_path / "latin1.csv")
    with pytest.raises(RosterError, match=r"semicolons\.csv: not a Canvas gradebook export .*separated by ';'"):
        read_roster(tmp_path / "semicolons.csv")
    assert [r["Student"] for r in read_roster(tmp_path / "as_canvas.csv").rows] == ["Zoë Ångström"]  # BOM, CRLF: read


def test_roster_students_with_no_submission_are_named(tmp_path):
    """A student on the roster who submitted nothing keeps an empty cell (Canvas keeps their grade as it is), and the
    run names them, so that a TA can chase a missing submission before the import."""
    from attn_ref.grade.classroom.canvas import write_canvas

    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(ROSTER[:4])  # Bob, Carol, Hal
    book = SimpleNamespace(graded=[_graded("bob", 80, {"name": "Bob", "sid": "S1"})], checks=SimpleNamespace(title="Lab", assignment="lab"),
                           notes=[], units=["c1"], written_units=[], maximum=lambda unit: 80.0)
    write_canvas(tmp_path, book, roster, "Lab (1)")
    assert book.notes[-1].startswith("canvas.csv: 2 roster student(s) have no submission in this class (Carol, Hal): their cells are empty")
    book.graded += [_graded("carol", 0, {"name": "Carol", "email": "carol@uni.edu"}), _graded("hal", 10, {"name": "Hal", "sid": "S7"})]
    book.notes.clear()
    write_canvas(tmp_path, book, roster, "Lab (1)")
    assert not any("no submission" in note for note in book.notes)


def test_roster_students_are_not_said_to_have_no_submission_where_one_may_be_theirs(tmp_path):
    """Where a submitted student matched no roster row (a mistyped SID) or several, the roster students left over
    may have submitted: the run says they were matched to no submission, and names the rows a student named
    together with another, never that they submitted nothing."""
    from attn_ref.grade.classroom.canvas import write_canvas

    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(ROSTER[:4])  # Bob, Carol, Hal
    book = SimpleNamespace(graded=[_graded("bob", 80, {"name": "Bob", "sid": "S1"}),
                                   _graded("carol", 70, {"name": "Carol", "sid": "S9"}),  # a typo: no such SID
                                   _graded("hal", 10, {"name": "Hal", "sid": "S7", "email": "carol@uni.edu"})],  # two rows
                           checks=SimpleNamespace(title="Lab", assignment="lab"), notes=[], units=["c1"], written_units=[],
                           maximum=lambda unit: 80.0)
    warnings = write_canvas(tmp_path, book, roster, "Lab (1)")
    note = book.notes[-1]
    assert "no submission in this class" not in note
    assert note.startswith("canvas.csv: 2 roster student(s) were matched to no submission (Carol, Hal)")
    assert "2 submitted student(s) matched no roster row, several, or one shared (canvas-unmatched.csv)" in note
    assert note.endswith("2 of them (Carol, Hal) are named by a submitted student who names another roster row too")
    told = {w.split(" (")[0]: w for w in warnings if w.startswith("canvas.csv: no score for")}
    assert list(told) == ["canvas.csv: no score for Carol", "canvas.csv: no score for Hal"], warnings
    assert "no roster row has this SID" in told["canvas.csv: no score for Carol"]  # each student's own reason
    assert "ambiguous: its SID and email name 2 roster rows" in told["canvas.csv: no score for Hal"]


def test_the_run_names_each_student_canvas_gives_no_score_with_their_reason_twenty_at_most(tmp_path):
    """One console line per student with that student's reason (never several cases in one sentence), at most
    20, then how many more canvas-unmatched.csv lists."""
    from attn_ref.grade.classroom.canvas import write_canvas

    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(ROSTER[:4])
    graded = [_graded(f"s{i}", 50, {"name": f"Student {i}", "sid": f"X{i}"}) for i in range(23)]
    book = SimpleNamespace(graded=graded, checks=SimpleNamespace(title="Lab", assignment="lab"), notes=[],
                           units=["c1"], written_units=[], maximum=lambda unit: 80.0)
    warnings = write_canvas(tmp_path, book, roster, "Lab (1)")
    told = [w for w in warnings if w.startswith("canvas.csv: no score for")]
    assert len(told) == 20 and told[0].startswith("canvas.csv: no score for Student 0 (SID X0; s0.ipynb): no roster row")
    assert warnings[-1] == "canvas.csv: and 3 more in canvas-unmatched.csv"
    with open(tmp_path / "canvas-unmatched.csv", newline="", encoding="utf-8-sig") as f:
        assert len(list(csv.DictReader(f))) == 23


def test_a_canvas_assignment_the_roster_lacks_is_warned_about(tmp_path):
    """--canvas-assignment names the column canvas.csv fills: one the roster has is filled; its name without Canvas's
    " (id)" finds that column; anything else (a typo) would be a new assignment on import, and the run warns."""
    from attn_ref.grade.classroom.canvas import write_canvas

    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([ROSTER[0] + ["Lab 3.1 (12345)", "Quiz 2 (12346)", "Current Score"],
                                 ROSTER[1] + ["", "7", "90"]])
    book = SimpleNamespace(graded=[_graded("bob", 80, {"name": "Bob", "sid": "S1"})], checks=SimpleNamespace(title="Lab", assignment="lab"),
                           notes=[], units=["c1"], written_units=[], maximum=lambda unit: 80.0)

    def header() -> list[str]:
        return next(csv.reader(open(tmp_path / "canvas.csv", newline="", encoding="utf-8-sig")))

    assert write_canvas(tmp_path, book, roster, "Lab 3.1 (12345)") == []
    assert header()[-1] == "Lab 3.1 (12345)"
    assert write_canvas(tmp_path, book, roster, " lab  3.1") == []
    assert header()[-1] == "Lab 3.1 (12345)"
    assert "the one named ' lab  3.1'" in book.notes[-1]
    for typo in ("Lab 3.2", "Lab 3.1 (12344)"):
        warnings = write_canvas(tmp_path, book, roster, typo)
        assert header()[-1] == typo
        assert warnings == [f"canvas.csv: --canvas-assignment {typo!r} is not a column of the roster, so Canvas's import adds a "
                            "new assignment by that name; to fill an existing one, pass its column as the roster writes it "
                            "(its assignments: 'Lab 3.1 (12345)', 'Quiz 2 (12346)')"]


def test_a_student_named_as_canvas_names_its_own_rows_keeps_their_row(tmp_path):
    """Canvas's "Points Possible" row has no ID and its test student no SIS ID; a student of either name has IDs and
    keeps their row (before, any row whose name began "Points Possible" was dropped, and its student unmatched)."""
    from attn_ref.grade.classroom.canvas import read_roster

    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Lab (1)\n    Points Possible,,,,,80\n"
                      "\"Student, Test\",999,,,S1,\nPoints Possible,106,505,pp@uni.edu,S1,\n"
                      "\"Student, Test\",107,506,test@uni.edu,S1,\nPoints Possible Jr,108,507,ppj@uni.edu,S1,\n",
                      encoding="utf-8")
    assert [(r["Student"], r["ID"]) for r in read_roster(roster).rows] == [
        ("Points Possible", "106"), ("Student, Test", "107"), ("Points Possible Jr", "108")]


def test_a_folder_deeper_than_any_path_is_its_students_row_and_the_class_goes_on(tmp_path):
    """A student's folder nested 2,100 deep passes the longest path the system takes: walking it raised, so the
    class read as holding no notebook and nobody was graded. Now the walk stops at MAX_FOLDER_DEPTH, the folder is
    that student's submission, and reading it says why it cannot be graded."""
    from attn_ref.grade.classroom.discover import discover, has_notebook
    from attn_ref.grade.intake.submission import MAX_FOLDER_DEPTH, SubmissionError, load

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.ipynb").write_bytes(_notebook_bytes())
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.mkdir("ben", dir_fd=fd)
        here = os.open("ben", os.O_RDONLY, dir_fd=fd)
        for _ in range(2100):  # relative to an open folder: no path this long is ever spelled out
            os.mkdir("d", dir_fd=here)
            deeper = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = deeper
        os.close(os.open("lab.ipynb", os.O_WRONLY | os.O_CREAT, dir_fd=here))
        os.close(here)
    finally:
        os.close(fd)
    assert has_notebook(folder)
    assert [s.key for s in discover(folder, tmp_path / "out")] == ["ann", "ben"]
    with pytest.raises(SubmissionError, match=f"folders more than {MAX_FOLDER_DEPTH} deep"):
        load(folder / "ben")
    subprocess.run(["rm", "-rf", str(folder / "ben")], check=True)  # pytest's own clean-up walks paths


def test_a_roster_id_the_text_rule_would_change_is_left_out_and_said(tmp_path):
    """An ID with a bidi override (00123 and U+202E) was written through the text rule as 00123?, which Canvas matches
    to no one: the row is left out and its student listed, as a formula ID is."""
    rows = [*ROSTER[:2], ["Bidi", "109", "S9\u202e", "bidi", "A"]]
    scores, unmatched, warnings = _canvas(tmp_path, [_graded("b", 40, {"name": "Bidi", "sid": "S9\u202e"})], roster_rows=rows)
    assert "Bidi" not in scores and "a character the text rule replaces" in unmatched["Bidi"]
    assert any("1 roster row(s) left out (Bidi)" in w for w in warnings)
