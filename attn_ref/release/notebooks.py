"""Otter Assign master notebooks, generated from an assignment's unit folders with nbformat.

Nobody edits a master or a generated notebook by hand: change the unit's files. Cell ids are set from
positions so that two builds of the same source are byte-identical.
"""

from __future__ import annotations

import ast
import re
import textwrap
from importlib import resources

import nbformat
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from ..grade.checks_json import EXPORT_FUNCTION, EXPORT_MODULE
from .course import Assignment
from .inline import module_body
from .public_tests import question_test
from .units import Question, Task

EXPLORATION_TAG = "exploration"  # skipped while grading
TIMING_TAG = "timing"  # outputs hold measured timings
# The lines of attn_ref/release/cells/export_written.py that export_module fills in
_WRITTEN_MARKER = "# attn_ref/portable/written.py (written_answers, answers_pdf) is written in here when the notebook is built"
_QUESTIONS_LINE = "QUESTIONS = []  # (question, prompt) of every written part, written in when the notebook is built"
_NAMES_FROM_WRITTEN = "  # noqa: F821 - from attn_ref/portable/written.py"
EXPORT_CELL_COMMENT = f"""# Save the notebook first (File > Save). This makes the zip to upload to Gradescope, with
# written_answers.pdf in it ({EXPORT_MODULE}.py, beside this notebook, makes it: keep the two in one folder)."""
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def _raw(kind: str, **fields) -> nbformat.NotebookNode:
    body = yaml.safe_dump(fields, sort_keys=False).strip() if fields else ""
    return new_raw_cell(f"# {kind}\n{body}".strip())


def _config(name: str, pdf: bool) -> nbformat.NotebookNode:
    return _raw(
        "ASSIGNMENT CONFIG",
        name=name,
        init_cell=True,
        check_all_cell=False,
        export_cell={"pdf": pdf, "instructions": "Save the notebook, run this cell, and upload the zip it makes to Gradescope."},
        tests={"ok_format": False},
        generate=False,
        run_tests=False,
    )


def _question_block(name: str, points, prompt_md: str, solution_cells: list, checks=(), manual=False, under_prompt=()) -> list:
    cells = [_raw("BEGIN QUESTION", name=name, points=points, manual=manual), new_markdown_cell(prompt_md), *under_prompt]
    cells += [_raw("BEGIN SOLUTION"), *solution_cells, _raw("END SOLUTION")]
    if checks:
        cells += [_raw("BEGIN TESTS"), *(new_code_cell(c.strip()) for c in checks), _raw("END TESTS")]
    cells.append(_raw("END QUESTION"))
    return cells


def choice_list(choices) -> str:
    return "\n".join(f"* **{letter}**: {text}" for letter, text in choices)


def question_prompt(q: Question) -> str:
    """The prompt, then each distinct list of choices its multiple-choice answers use."""
    lists = []
    for answer in q.answers:
        if answer.choices and answer.choices not in lists:
            lists.append(answer.choices)
    return "\n\n".join([q.prompt.strip(), *(choice_list(c) for c in lists)])


def _solution_cell(q: Question) -> nbformat.NotebookNode:
    stubs = "\n".join(f"{a.name} = ..." for a in q.answers)
    source = f'# BEGIN SOLUTION NO PROMPT\n{q.solution}\n# END SOLUTION\n""" # BEGIN PROMPT\n{stubs}\n""" # END PROMPT'
    return new_code_cell(source)


_VARIANTS_MARKER = "    # attn_ref/portable/variants.py is written in here when the notebook is built\n"
LOCKED = {"deletable": False, "editable": False}


def identity_cell(key: str) -> nbformat.NotebookNode:
    """The cell where a student types their Gradescope identity, with attn_ref/portable/variants.py written in."""
    source = resources.files("attn_ref.release.cells").joinpath("identity.py").read_text()
    if _VARIANTS_MARKER not in source:
        raise ValueError("attn_ref/release/cells/identity.py lost its variants marker")
    body = textwrap.indent(f"KEY = {key!r}\n" + module_body("attn_ref.portable", "variants.py"), "    ")
    return new_code_cell(source.replace(_VARIANTS_MARKER, body).replace("  # noqa: F821 - from attn_ref/portable/variants.py", ""))


def _numbers_cell(q: Question) -> nbformat.NotebookNode:
    """Right under a prompt with parameters: the student's own values, defined and printed."""
    lines = [f"_numbers = my_numbers({q.name!r}, {q.parameter_lists!r}, {q.defaults!r})",
             *(f"{p.name} = _numbers[{p.name!r}]" for p in q.parameters),
             f"print({q.name + ', your numbers:'!r} if GRADESCOPE_ID.strip() else "
             f"{q.name + ': the note' + chr(39) + 's numbers (GRADESCOPE_ID is empty, so these are not yours yet):'!r}, "
             "', '.join(f'{k} = {v}' for k, v in _numbers.items()))"]
    return new_code_cell("\n".join(lines), metadata=dict(LOCKED))


def _question_cells(q: Question) -> list:
    source = f"*{q.source}.*\n\n" if q.source else ""
    heading = f"## {q.name}: {q.title}\n{source}{question_prompt(q)}"
    numbers = [_numbers_cell(q)] if q.parameters else []
    cells = _question_block(q.name, q.points, heading, [_solution_cell(q)], (question_test(q),), under_prompt=numbers)
    if q.written_prompt:
        cells += _question_block(f"{q.name}_written", q.written_points,
                                 f"**{q.name}, explain** (graded by hand). {q.written_prompt}",
                                 [new_markdown_cell(q.written_solution)], manual=True)
    return cells


def _task_cells(t: Task) -> list:
    heading = f"## {t.name}: {t.title}\n\n{t.prompt.strip()}"
    if t.example:
        heading += f"\n\n**Worked example** (from the reference):\n\n{t.example}"
    return _question_block(t.name, t.points, heading, [new_code_cell(t.starter)], t.public_checks)


def master(assignment: Assignment, pdf: bool = False) -> nbformat.NotebookNode:
    """The Otter Assign master notebook of an assignment."""
    cells = [_config(assignment.name, pdf), new_markdown_cell(f"{assignment.intro.rstrip()}\n\n{_template('getting_started.md', assignment.name)}")]
    if any(q.parameters for q in assignment.questions):
        cells.append(identity_cell(assignment.layout.variant_key))
    if assignment.setup:
        cells.append(new_code_cell(assignment.setup))
    for unit in assignment.units:
        cells += _question_cells(unit) if isinstance(unit, Question) else _task_cells(unit)
    if assignment.exploration_intro:
        cells.append(new_markdown_cell(assignment.exploration_intro))
    for source, timing in assignment.exploration:
        cells.append(new_code_cell(source, metadata={"tags": [EXPLORATION_TAG] + ([TIMING_TAG] if timing else [])}))
    return normalize(new_notebook(cells=cells, metadata={"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}))


def _template(file: str, notebook: str, otter_version: str = "") -> str:
    """A file of attn_ref/release/cells/ with the notebook's name (and otter's version) written in."""
    text = resources.files("attn_ref.release.cells").joinpath(file).read_text()
    return text.replace("NOTEBOOK", notebook).replace("OTTER_VERSION", otter_version).rstrip()


def with_init_cell(nb: nbformat.NotebookNode, assignment: Assignment, otter_version: str) -> nbformat.NotebookNode:
    """otter's first cell (`import otter`) replaced by cells/init_otter.py: it installs the pinned otter-grader
    where the environment lacks it, and says on Colab what does not work there."""
    found = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("# Initialize Otter")]
    if len(found) != 1 or "otter.Notebook(" not in found[0].source:
        raise ValueError("otter assign's first cell changed: not one '# Initialize Otter' cell calling otter.Notebook")
    found[0].source = _template("init_otter.py", assignment.name, otter_version)
    return nb


def normalize(nb: nbformat.NotebookNode, prefix: str = "cell") -> nbformat.NotebookNode:
    """Position-based cell ids and no execution timestamps: the same source gives the same bytes."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{prefix}-{i:03d}"
        cell.metadata.pop("execution", None)
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def _written_questions(assignment: Assignment) -> list[tuple[str, str]]:
    return [(q.name, q.written_prompt) for q in assignment.units if isinstance(q, Question) and q.written_prompt]


def export_module(assignment: Assignment) -> str | None:
    """The source of export_written.py, shipped beside the student notebook, or None when the assignment has
    no written part (its export cell stays otter's own). The template (attn_ref/release/cells/export_written.py)
    gets attn_ref/portable/written.py's functions and the assignment's written questions written in."""
    questions = _written_questions(assignment)
    if not questions:
        return None
    source = resources.files("attn_ref.release.cells").joinpath(f"{EXPORT_MODULE}.py").read_text()
    listed = "".join(f"    {question!r},\n" for question in questions)
    for placeholder, value in ((_WRITTEN_MARKER, module_body("attn_ref.portable", "written.py")),
                               (_QUESTIONS_LINE, f"QUESTIONS = [  # (question, prompt) of every written part\n{listed}]"),
                               ('TITLE = ""', f"TITLE = {assignment.title!r}"),
                               (_NAMES_FROM_WRITTEN, "")):  # defined in the shipped module itself
        if placeholder not in source:
            raise ValueError(f"attn_ref/release/cells/{EXPORT_MODULE}.py lost {placeholder!r}")
        source = source.replace(placeholder, value, 1)
    return source


def _export_call(line: str) -> str:
    """otter's `grader.export(pdf=False, ...)` -> `export(grader, pdf=False, ...)`, the same arguments."""
    call = ast.parse(line.strip(), mode="eval").body
    if not isinstance(call, ast.Call):
        raise ValueError(f"otter's export cell changed: {line!r} is not one call")
    call.func, call.args = ast.Name(EXPORT_FUNCTION), [ast.Name("grader"), *call.args]
    return ast.unparse(call)


def with_export_module(nb: nbformat.NotebookNode, assignment: Assignment) -> nbformat.NotebookNode:
    """The student notebook's export cell, for an assignment with written parts: one call of the module
    beside the notebook (export_module), which writes written_answers.pdf into the zip grader.export makes."""
    if not _written_questions(assignment):
        return nb
    for cell in nb.cells:
        if cell.cell_type == "code" and "grader.export(" in cell.source:
            (export,) = [line for line in cell.source.splitlines() if "grader.export(" in line]
            cell.source = "\n".join((EXPORT_CELL_COMMENT, f"from {EXPORT_MODULE} import {EXPORT_FUNCTION}", "",
                                      _export_call(export)))
    return nb


def without_blank_cells(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """otter assign's notebooks without their blank Markdown cells (it leaves one after the export cell)."""
    nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.source.strip()]
    return nb


def with_outro(nb: nbformat.NotebookNode, assignment: Assignment) -> nbformat.NotebookNode:
    """The assignment's outro.md as the notebook's last cell (after otter's submission cell), if it has one."""
    if assignment.outro:
        nb.cells.append(new_markdown_cell(assignment.outro))
    return nb


_PROMPT_BLOCK = re.compile(r'\n?""" # BEGIN PROMPT\n.*?""" # END PROMPT', re.S)
_MARKER_LINE = re.compile(r"^[ \t]*# (BEGIN|END) SOLUTION( NO PROMPT)?[ \t]*\n?", re.M)
_PLACEHOLDER = "_Type your answer here, replacing this text._"


def solution_from_autograder_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Otter's autograder notebook -> a clean solution notebook: markers, stubs and export cell removed.

    Refuses a notebook with hidden otter tests (ours keep every hidden check in the grader).
    """
    tests = nb.metadata.get("otter", {}).get("tests", {})
    hidden = [name for name, src in tests.items() if "hidden=True" in src]
    if hidden:
        raise ValueError(f"otter tests marked hidden would be published in the solution notebook: {hidden}")
    cells = []
    for cell in nb.cells:
        source = cell.source
        if cell.cell_type == "markdown" and source.strip() == _PLACEHOLDER:
            continue
        if cell.cell_type == "code" and "grader.export(" in source:
            continue
        if cell.cell_type == "markdown" and source.startswith("## Submission"):
            continue
        if cell.cell_type == "code":
            source = _MARKER_LINE.sub("", _PROMPT_BLOCK.sub("", source)).rstrip()
            source = re.sub(r"\s*# SOLUTION$", "", source, flags=re.M)
        cell.source = source
        cells.append(cell)
    nb.cells = cells
    return nb
