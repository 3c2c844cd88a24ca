"""A small synthetic class for the integrity report and the written pages: notebooks on disk and a
Gradebook built from them directly, no grading (a report is fast to test and its layout easy to stress).

Eight submissions, one of them a group of two: Ada's group and Grace copied each other on both questions,
Alan and Edsger on c1 (with a 600-character line no browser can break by itself), Donald and Mallory on c1
(code that closes a <pre> and opens a <script>), the rest wrote their own;
every notebook keeps the starter's signature and long docstring. Gradescope's scores differ for Grace (c2)
and Edsger (c1); three are flagged; a name, a flag, code and an answer carry HTML.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from attn_ref.grade.checks_json import Checks, FunctionUnit, WrittenPart
from attn_ref.grade.classroom.discover import Submission
from attn_ref.grade.classroom.gradebook import Gradebook, Graded

SOFTMAX = '''def softmax(x, axis=-1):
    """Softmax of x along axis, stable for large inputs: subtract the maximum along axis first.

    x: an array of any shape. Returns an array of x's shape whose entries along axis sum to one,
    computed without overflow for inputs as large as 1e4 and without underflow to all zeros.
    """
'''
ATTENTION = '''def attention(q, k, v, mask=None):
    """Scaled dot-product attention: softmax(q @ k.T / sqrt(d_k)) @ v, masked where mask is False.

    q: (..., T, d_k), k: (..., S, d_k), v: (..., S, d_v), mask: broadcastable to (..., T, S) or None.
    Returns out (..., T, d_v) and weights (..., T, S), each row of weights summing to one.
    """
'''
LONG_LINE = "    table = [" + ",".join(str(1000 + i) for i in range(120)) + "]  # no space to break at\n"

SOFTMAX_BODIES = {
    "copied": "    shifted = x - np.max(x, axis=axis, keepdims=True)\n    exps = np.exp(shifted)\n"
              "    return exps / np.sum(exps, axis=axis, keepdims=True)\n",
    "long": LONG_LINE + "    m = x.max(axis=axis, keepdims=True)\n    e = np.exp(x - m)\n"
            "    total = e.sum(axis=axis, keepdims=True)\n    return e / total\n",
    "inplace": "    z = np.array(x, dtype=float, copy=True)\n    z -= z.max(axis, keepdims=True)\n    np.exp(z, out=z)\n"
               "    z /= z.sum(axis, keepdims=True)\n    return z\n",
    "logsumexp": "    top = np.amax(x, axis=axis, keepdims=True)\n"
                 "    lse = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))\n    return np.exp(x - lse)\n",
    "moved": "    y = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)\n    out = np.empty_like(y)\n"
             "    for index in np.ndindex(y.shape[:-1]):\n        row = np.exp(y[index] - y[index].max())\n"
             "        out[index] = row / row.sum()\n    return np.moveaxis(out, -1, axis)\n",
    "script": "    note = \"</pre><script>alert('code')</script>\"\n    if x.ndim == 0:\n        return np.ones_like(x)\n"
              "    big = np.max(x, axis=axis)\n    big = np.expand_dims(big, axis)\n    num = np.exp(np.subtract(x, big))\n"
              "    den = np.add.reduce(num, axis=axis, keepdims=True)\n    return np.divide(num, den)\n",
}
ATTENTION_BODIES = {
    "copied": "    d_k = q.shape[-1]\n    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)\n"
              "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
              "    weights = softmax(scores, axis=-1)\n    return weights @ v, weights\n",
    "einsum": "    logits = np.einsum('...td,...sd->...ts', q, k) * q.shape[-1] ** -0.5\n"
              "    logits = logits if mask is None else np.where(mask, logits, -1e30)\n"
              "    w = softmax(logits)\n    return np.einsum('...ts,...sd->...td', w, v), w\n",
    "matmul": "    scale = 1.0 / np.sqrt(k.shape[-1])\n    sims = np.matmul(q, k.swapaxes(-1, -2)) * scale\n"
              "    if mask is not None:\n        sims[..., ~mask] = -np.inf\n    p = np.exp(sims - sims.max(-1, keepdims=True))\n"
              "    p /= p.sum(-1, keepdims=True)\n    return np.matmul(p, v), p\n",
    "none": "",
}
# key: (students, softmax body, attention body, local scores (c1, c2), Gradescope's (c1, c2), flags)
CLASS = {
    "s1_ada": ([("Ada Lovelace", "00123"), ("Zoë Ångström", "00456")], "copied", "copied", (2, 3), (2, 3), []),
    "s2_grace": ([("Grace Hopper", "A2")], "copied", "copied", (2, 3), (2, 0), ["reads the grader's files: /autograder/source"]),
    "s3_alan": ([("Alan Turing", "A3")], "long", "einsum", (2, 3), (2, 3), []),
    "s4_edsger": ([("Edsger Dijkstra", "A4")], "long", "matmul", (2, 1), (0, 1), []),
    "s5_barbara": ([("Barbara Liskov", "A5")], "inplace", "none", (2, 0), (2, 0), []),
    "s6_donald": ([("Donald Knuth", "A6")], "script", "none", (2, 0), (2, 0), []),
    "s7_ken": ([("Ken Thompson", "A7")], "moved", "none", (2, 0), (2, 0), ["patches numpy: np.allclose"]),
    "s8_mallory": ([("<b>Mallory</b><script>alert(1)</script>", "A8")], "script", "none", (2, 0), (2, 0),
                   ["called <img src=x onerror=alert(2)>"]),
}
WRITTEN = {"question": "q1", "title": "Why attention", "prompt": "Why does attention train faster than an RNN?", "points": 1}
LONG_ANSWER = "Parallel matmuls; see https://example.edu/" + "a" * 400 + " for the proof."


def notebook(softmax: str, attention: str, answer: str) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell("## c1: Softmax"), nbformat.v4.new_code_cell("import numpy as np"),
             nbformat.v4.new_code_cell(SOFTMAX + (softmax or "    ...\n")),
             nbformat.v4.new_markdown_cell("## c2: Attention"), nbformat.v4.new_code_cell(ATTENTION + (attention or "    ...\n")),
             nbformat.v4.new_markdown_cell(f"**q1, explain** (graded by hand). {WRITTEN['prompt']}"),
             nbformat.v4.new_markdown_cell(answer)]
    for i, cell in enumerate(cells):
        cell["id"] = f"c{i}"
    return nbformat.v4.new_notebook(cells=cells)


def checks() -> Checks:
    return Checks("lab", (FunctionUnit("c1", "Softmax", "softmax", starter=SOFTMAX + "    ...\n"),
                          FunctionUnit("c2", "Attention", "attention", starter=ATTENTION + "    ...\n")),
                  (WrittenPart(**WRITTEN),))


def make_class(folder: Path, scores: bool = True) -> Gradebook:
    """The class written under folder; scores=False: a Gradescope export that lists no scores."""
    folder.mkdir(parents=True, exist_ok=True)
    graded = []
    for i, (key, (people, softmax, attention, ours, theirs, flags)) in enumerate(CLASS.items()):
        answer = {0: LONG_ANSWER, 7: "<script>alert('answer')</script> Attention runs in parallel."}.get(i, f"Answer {i}.")
        path = folder / f"{key}.ipynb"
        nbformat.write(notebook(SOFTMAX_BODIES[softmax], ATTENTION_BODIES[attention], answer), str(path))
        students = [{"name": name, "sid": sid, "email": f"{sid.lower()}@uni.edu"} for name, sid in people]
        gradescope = ({"score": float(sum(theirs)), "tests": {"c1": float(theirs[0]), "c2": float(theirs[1])}} if scores
                      else {"score": None, "tests": {}})
        results = {"extra_data": {"status": "ok", "integrity_flags": flags}}
        graded.append(Graded(Submission(key, path, students, gradescope=gradescope), results,
                             {"c1": float(ours[0]), "c2": float(ours[1])}))
    return Gradebook(checks(), graded)


def make_large_class(folder: Path, n: int = 1000) -> Gradebook:
    """n students, each the body of similarity_class.py's c1 and c3 answers under this class's starters (right and
    wrong ways, planted copies, hundreds of pairs over the threshold); every seventh score differs from
    Gradescope's, every fourth submission is flagged, and a few were not graded, for reasons of their own."""
    from similarity_class import make_class as answers

    folder.mkdir(parents=True, exist_ok=True)
    lab = answers(n, seed=2)
    headers = {q: lab.starters[q][:lab.starters[q].rindex("    ...")] for q in ("c1", "c3")}
    graded = []
    for i in range(n):
        key = f"s{i:04d}"
        softmax, attention = (lab.codes[q][key].removeprefix(headers[q]) for q in ("c1", "c3"))
        path = folder / f"{key}.ipynb"
        nbformat.write(notebook(softmax, attention, f"Answer {i}."), str(path))
        ours = (2.0 if i % 3 else 0.0, 3.0 if i % 4 else 1.0)
        theirs = (ours[0], ours[1] - (i % 7 == 0))
        flags = [f"patches numpy: np.allclose <b>{i}</b>"] if i % 4 == 0 else []
        status = {13: "error: the kernel died (exit -9)", 14: f"error: a {i}-character line"}.get(i % 50, "ok")
        results = {"extra_data": {"status": status, "integrity_flags": flags}}
        graded.append(Graded(Submission(key, path, [{"name": f"Student {i}", "sid": f"S{i:05d}", "email": f"s{i}@uni.edu"}],
                                        gradescope={"score": sum(theirs), "tests": {"c1": theirs[0], "c2": theirs[1]}}),
                             results, {"c1": ours[0], "c2": ours[1]}))
    return Gradebook(checks(), graded)
