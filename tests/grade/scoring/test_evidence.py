"""Points need real evidence, end to end: placeholders graded by the lab's autograder score nothing, and
c8's "by autograd" (the kernel's own word) is worth one point at most."""

import json

import pytest
from conftest import edit_notebook, max_scores, scores
from placeholders import PLACEHOLDERS

ZIP = "autograder/lab-autograder.zip"



def _lab(release, grade_notebook, replace: dict[str, str]) -> tuple[dict, dict[str, str]]:
    out, _ = release
    nb = edit_notebook(out / "solutions/lab/lab.ipynb", replace)
    results = grade_notebook(nb, out / ZIP)
    assert results["extra_data"]["status"] == "ok"
    return results, {t["name"].split(":")[0]: t["output"] for t in results["tests"]}


def test_placeholders_score_nothing_on_every_lab_task(release, grade_notebook):
    """Today's degenerate probes (a single key, a single token, T = 1, a window of 1) and the property probes
    beside them are passed by these placeholders; none of it is evidence, so every task scores 0. One test
    for the three kinds: each kind's notebook gives every task its placeholder at once."""
    credited_nothing = []
    for kind, stubs in PLACEHOLDERS.items():
        results, outputs = _lab(release, grade_notebook, stubs)
        got = scores(results)
        assert got == dict.fromkeys(got, 0), f"{kind}: {got}\n{json.dumps(outputs, indent=1)}"
        credited_nothing += [line for text in outputs.values() for line in text.splitlines() if "but not counted:" in line]
    assert credited_nothing and all("does none of the task" in line and "general cases" in line for line in credited_nothing)


def _c8_line(output: str, fragment: str) -> str:
    return next(line for line in output.splitlines() if fragment in line)


CLOSED_FORM = "def rnn_gradient_norm(T, factor):\n{}    return abs(factor) ** (T - 1)"


@pytest.mark.parametrize("backward, lost", [
    ("    torch.ones(1, requires_grad=True).sum().backward()  # unrelated to the answer\n", 0),
    ("", 1),
], ids=["closed form and an unrelated backward", "closed form alone"])
def test_c8_by_autograd_is_the_kernels_word_worth_one_point(release, grade_notebook, backward, lost):
    """The closed form earns the value points (the values are right); an unrelated backward() makes the
    kernel say "autograd ran", which the grader cannot check, so that line is worth 1 point at most and the
    closed form alone loses only that line."""
    results, outputs = _lab(release, grade_notebook, {"def rnn_gradient_norm(": CLOSED_FORM.format(backward)})
    got, full = scores(results), max_scores(results)
    line = _c8_line(outputs["c8"], "by autograd")
    assert line.endswith("/1)") or "/1): " in line, line  # the line is worth one point
    assert got["c8"] == full["c8"] - lost == 10 - lost, outputs["c8"]
    failed = [line for line in outputs["c8"].splitlines() if line.startswith("✗")]
    assert failed == ([line] if lost else []), outputs["c8"]
