"""No expected value anywhere students look: released notebooks and probe messages.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

from hostile import answer_spellings, every_function_calls, notebook, replaced, visible_text


def test_no_answer_value_in_any_released_student_notebook(release):
    out, _ = release
    for name in ("practice", "lab"):
        text = (out / "assignments" / name / f"{name}.ipynb").read_text()
        leaked = [s for s in answer_spellings() if s in text]
        assert not leaked, (name, leaked)


def test_probe_messages_never_reveal_reference_values(release, local):
    zeros = every_function_calls(notebook(release, "lab", "blank"), "return torch.zeros(3) if 'torch' in globals() else 0.0")
    nb = replaced(zeros, "def rnn_gradient_norm(", "def rnn_gradient_norm(T, factor):\n    return 0.0")
    results = local(nb, "lab")
    text = visible_text(results)
    assert "max |diff|" not in text and str(round(0.9 ** 49, 6)) not in text and "5.73e-03" not in text
