"""`attn-ref build --otter-zip`: otter's own autograder zip, made by `otter assign` from the same sources.

For instructors who want `otter run`, `otter grade` or otter's own Gradescope flow. Its hidden tests are
plain otter test cases holding fixed inputs and the values the reference gave for them at build time:
the zip carries no reference (with attn_ref in the zip, `import attn_ref` would score full). It keeps
otter's model, and with it what otter does not stop (docs/instructors.md, "otter's own zip"): tests run in the
student's process, no bans, no sandbox, the same inputs for everyone.

Which hidden probes it keeps: those on the CPU whose verdict is a comparison with the reference (the
precision, device, in-place and second-call probes need the hardened grader). Each answer of a question
is one hidden test, compared as the hardened grader compares it.
"""

from __future__ import annotations

import base64
import copy
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

import nbformat
import numpy as np
import yaml

from ..grade.checks_json import FunctionUnit, Probe
from ..grade.scoring.autograder import Autograder, load_autograder
from ..grade.scoring.comparators import FLOAT_RTOL, SCALAR_RTOL, tolerance
from ..grade.scoring.inputs import Input, generate, probe_rng, reference_outputs
from .course import Assignment
from .locks import locked
from .notebooks import master, normalize
from .public_tests import typerules_body
from .units import Answer, Question

OTTER_SEED = 0  # every submission gets the same inputs: otter's tests are fixed
REQUIREMENTS = "requirements.txt"  # otter's zip installs the students' lock


def _array_literal(data: np.ndarray) -> str:
    """An expression that rebuilds the array exactly (its bytes in base64)."""
    data = np.ascontiguousarray(data)
    payload = base64.b64encode(data.tobytes()).decode()
    return f"np.frombuffer(base64.b64decode({payload!r}), dtype={data.dtype.str!r}).reshape({tuple(data.shape)!r}).copy()"


def _argument(a: Input, framework: str) -> str:
    if a.kind == "array":
        literal = _array_literal(a.data)
        return f"torch.from_numpy({literal})" if framework == "torch" else literal
    if a.kind == "device":
        return repr(str(a.data))
    return repr(a.data)


def kept(probe: Probe) -> bool:
    """A probe otter's zip can keep: on the CPU, judged by a comparison with the reference, one call."""
    return (probe.device == "cpu" and "matches_reference" in (probe.checks or ("matches_reference",))
            and "calls" not in probe.options)


def probe_test(unit: FunctionUnit, u_index: int, p_index: int, probe: Probe, autograder: Autograder) -> str:
    """One otter test case (a hidden exception-based test) for one probe, its inputs and expected outputs literal."""
    args = generate(probe, probe_rng(OTTER_SEED, u_index, p_index))
    expected = reference_outputs(autograder.reference(unit.reference), args)
    rtol, atol = tolerance(probe)
    call = ", ".join(f"{a.name}={_argument(a, unit.framework)}" if a.keyword else _argument(a, unit.framework) for a in args)
    wanted = ", ".join(_array_literal(np.asarray(e, dtype=np.float64)) if np.ndim(e) else repr(float(e)) for e in expected)
    body = f'''\
""" # BEGIN TEST CONFIG
hidden: true
""" # END TEST CONFIG
def test_{unit.name}_hidden_{p_index}({unit.function}):
    """{unit.name}, hidden probe {p_index}"""
    import base64
    import numpy as np
    {"import torch" if unit.framework == "torch" else ""}
    got = {unit.function}({call})
    got = list(got) if isinstance(got, tuple) else [got]
    wanted = [{wanted}]
    assert len(got) == len(wanted), {f"{unit.function} should return {len(expected)} value(s)"!r}
    for i, (g, w) in enumerate(zip(got, wanted)):
        g = g.detach().cpu().double().numpy() if hasattr(g, "detach") else np.asarray(g, dtype=np.float64)
        if np.ndim(w) == 0:
            assert g.size == 1 and abs(float(g) - w) <= {SCALAR_RTOL!r} * abs(w), "output %d is not the reference's value (%s)" % (i, {probe.name!r})
        else:
            assert g.shape == w.shape, "output %d has shape %s, expected %s" % (i, g.shape, w.shape)
            assert np.all(np.abs(g - w) <= {rtol!r} * np.abs(w) + {atol!r} * np.max(np.abs(w))), \\
                "output %d differs from the reference (%s)" % (i, {probe.name!r})
'''
    return body


def answer_test(question: Question, answer: Answer) -> str:
    """One otter test case (hidden) for one answer: its form by the type rules, then its value."""
    expected = answer.expected
    if answer.kind == "float":
        verdict = f"relative_difference(value, {expected!r}) <= {FLOAT_RTOL!r}"
    elif answer.kind == "int_dict":
        pairs = expected.items() if isinstance(expected, dict) else expected
        verdict = f"value == {({int(k): v for k, v in pairs})!r}"
    elif answer.kind == "choice":
        verdict = f"value == {str(expected).upper()!r}"
    else:
        verdict = f"value == {expected!r}"
    letters = "".join(letter for letter, _ in answer.choices)
    body = (typerules_body() + "\n"
            f"value, problem = read({answer.kind!r}, describe({answer.name}), {letters!r})\n"
            f"assert problem is None, {answer.name!r} + ': ' + str(problem)\n"
            f"assert {verdict}, {answer.name + ' is not the right value'!r}\n")
    return ('""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
            f"def test_{answer.name}_value({answer.name}):\n" + textwrap.indent(body, "    "))


def hidden_tests(assignment: Assignment, autograder: Autograder) -> dict[str, list[str]]:
    """Each unit's hidden otter test cases."""
    tests: dict[str, list[str]] = {}
    for question in assignment.questions:
        tests[question.name] = [answer_test(question, a) for a in question.answers]
    for u_index, unit in enumerate(autograder.checks.units):
        if isinstance(unit, FunctionUnit):
            tests[unit.name] = [probe_test(unit, u_index, p_index, probe, autograder)
                                for p_index, probe in enumerate(unit.probes) if kept(probe)]
    return tests


_PUBLIC_POINTS = '""" # BEGIN TEST CONFIG\npoints: 0\n""" # END TEST CONFIG\n'


def otter_master(assignment: Assignment, tests: dict[str, list[str]]) -> nbformat.NotebookNode:
    """The master notebook with otter's zip generated (its requirements: the students' lock), public tests at
    0 points (they check the form, as in the hardened zip) and each unit's hidden tests sharing its points."""
    nb = copy.deepcopy(master(assignment))
    nb.cells[0].source = nb.cells[0].source.replace("generate: false", f"generate: true\nrequirements: {REQUIREMENTS}")
    cells, unit, has_tests, in_tests = [], "", False, False
    for cell in nb.cells:
        source = cell.source if cell.cell_type == "raw" else ""
        hidden = [nbformat.v4.new_code_cell(t) for t in tests.get(unit, [])]
        if source.startswith("# BEGIN QUESTION"):
            unit = yaml.safe_load(source.split("\n", 1)[1])["name"]
            has_tests = False
        elif source.startswith("# BEGIN TESTS"):
            has_tests = in_tests = True
        elif source.startswith("# END TESTS"):
            cells += hidden
            in_tests = False
        elif source.startswith("# END QUESTION") and not has_tests and hidden:
            cells += [nbformat.v4.new_raw_cell("# BEGIN TESTS"), *hidden, nbformat.v4.new_raw_cell("# END TESTS")]
        elif in_tests and cell.cell_type == "code":
            cell.source = _PUBLIC_POINTS + cell.source
        cells.append(cell)
    nb.cells = cells
    return normalize(nb)


def otter_zip(assignment: Assignment, hardened_zip: Path, folder: Path, zip_date: tuple) -> Path:
    """autograder/<name>-otter-autograder.zip, made by `otter assign`, rewritten with fixed timestamps."""
    tests = hidden_tests(assignment, load_autograder(hardened_zip))
    name = assignment.name
    with tempfile.TemporaryDirectory(prefix=f"attn-ref-otter-{name}-") as tmp:
        tmp = Path(tmp)
        nbformat.write(otter_master(assignment, tests), str(tmp / f"{name}.ipynb"))
        (tmp / REQUIREMENTS).write_text(locked("student"))
        done = subprocess.run([sys.executable, "-m", "otter", "assign", "--no-pdfs", f"{name}.ipynb", "dist"],
                              cwd=tmp, capture_output=True, text=True)
        made = sorted((tmp / "dist" / "autograder").glob("*.zip"))
        if done.returncode != 0 or len(made) != 1:
            raise RuntimeError(f"otter assign could not make otter's zip for {name}:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
        path = folder / f"{name}-otter-autograder.zip"
        with zipfile.ZipFile(made[0]) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
            for member in sorted(source.namelist()):
                info = zipfile.ZipInfo(member, date_time=zip_date)
                info.external_attr = source.getinfo(member).external_attr
                info.compress_type = zipfile.ZIP_DEFLATED
                target.writestr(info, source.read(member))
    return path
