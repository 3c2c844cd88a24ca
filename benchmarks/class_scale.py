"""What a class costs the TA's process, stage by stage, as it grows: a lab class of --sizes submissions (50, 200
and 1,000) as a Gradescope export (submission_metadata.yml naming each student) and a Canvas roster.

Run: .venv/bin/python benchmarks/class_scale.py [--sizes 50,200,1000] [--sample 8] [--jobs 2] [--release DIR]
[--hostile]. With --hostile, the first submission's notebook carries a 60 MB output and its metadata entry
800,000 small values (about 9 MB of submission_metadata.yml): whatever one submission holds, the TA's process
should not grow with it.

Each student's notebook is the lab's solution with c1, c2, c3 and c6 as tests/similarity_class.py writes them
(right and wrong ways, planted copies), and c4, c5, c7 and c8 as the starter gave them (a thousand copies of the
solution would be a thousand-student cluster: every pair flagged). Grading is measured on --sample submissions (`grade_batch --jobs`); every
other submission gets a copy of a sample's results, rewritten for its own key and files (as the batch writes
them), so the stages after grading see a whole graded class. Then, per size, in a fresh process of its own (its
peak memory is the class's alone): finding the class and what is left to grade (discover), reading the results
into the gradebook, grades.csv, summary.png, mistakes.csv and .png, the similarity, the rest of report.html, the
Canvas files and the written pages, each timed (wall, and CPU of the process and everything under it) as
write_gradebook runs them. Prints, per stage and size, the seconds and the milliseconds per submission, the peak
memory (VmHWM) of the TA's process, and report.html's size and its share taken by the code of the pairs. (Not
ru_maxrss: Linux carries it across exec, so a process this benchmark starts reported this benchmark's own peak.)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from similarity import cpu_seconds  # noqa: E402
from similarity_class import make_class  # noqa: E402

STAGES = ("discover", "gradebook read", "grades.csv", "summary.png", "mistakes", "similarity", "report",
          "canvas files", "written pages")


def notebooks(solution: Path, autograder: Path, n: int, seed: int) -> list[nbformat.NotebookNode]:
    """n lab notebooks: the solution, with the similarity class's code for its function cells."""
    from attn_ref.grade.checks_json import FunctionUnit
    from attn_ref.grade.classroom.graded_code import unit_code
    from attn_ref.grade.scoring.autograder import load_autograder

    base = nbformat.read(str(solution), as_version=4)
    lab = make_class(n, seed)
    units = [u for u in load_autograder(autograder).checks.units if isinstance(u, FunctionUnit)]
    cells = {u.name: next(i for i, c in enumerate(base.cells) if c.cell_type == "code" and unit_code(_one(c), u)) for u in units}
    for u in units:  # a question the synthetic class does not write: left as the starter gave it (not compared)
        if u.name not in lab.codes:
            base.cells[cells[u.name]].source = u.starter
    found = []
    for i in range(n):
        nb = nbformat.from_dict(json.loads(json.dumps(base)))
        for name, code in lab.codes.items():
            nb.cells[cells[name]].source = code[f"s{i:04d}"]
        found.append(nb)
    return found


def _one(cell) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[cell])


def export(folder: Path, nbs: list, rng: random.Random, hostile: bool = False) -> Path:
    """A Gradescope export of the notebooks, and a Canvas roster of its students (returned); ``hostile``: the
    first submission's notebook and metadata entry as large as an attacker makes them."""
    folder.mkdir(parents=True)
    metadata, roster = {}, [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 3.1 (55502)"]]
    for i, nb in enumerate(nbs):
        key = f"submission_{i:04d}"
        (folder / key).mkdir()
        nbformat.write(nb, str(folder / key / "lab.ipynb"))
        if hostile and i == 0:
            raw = json.loads((folder / key / "lab.ipynb").read_text())
            raw["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (60 << 20)}]
            (folder / key / "lab.ipynb").write_text(json.dumps(raw))
        metadata[key] = {":submitters": [{":name": f"Student {i}", ":sid": f"S{i:05d}", ":email": f"s{i}@uni.edu"}],
                         ":score": f"{rng.randint(0, 40)}.0"}
        roster.append([f"{i}, Student", str(70000 + i), f"S{i:05d}", f"s{i}@uni.edu", f"Sec {i % 4}", ""])
        if hostile and i == 0:
            metadata[key][":junk"] = list(range(800_000))
    (folder / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    with open(folder.parent / f"{folder.name}-roster.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(roster)
    return folder.parent / f"{folder.name}-roster.csv"


def grade_sample(folder: Path, autograder: Path, out: Path, jobs: int) -> tuple[float, float]:
    """Grade the export (the sample) with --jobs: (wall, CPU) seconds."""
    from attn_ref.grade.classroom.batch import grade_batch

    cpu, start = cpu_seconds(), time.perf_counter()
    grade_batch(folder, autograder, out, jobs=jobs, progress=False)
    return time.perf_counter() - start, cpu_seconds() - cpu


def copy_results(sample_out: Path, folder: Path, out: Path) -> None:
    """Every submission of the class a results file: a sample's, rewritten for it (its key, its files' hash)."""
    from attn_ref.grade.classroom.discover import content_hash, discover
    from attn_ref.grade.results import CONTENT_HASH, Results, write_results

    graded = sorted((sample_out / "results").glob("*.json"))
    (out / "results").mkdir(parents=True, exist_ok=True)
    for i, sub in enumerate(discover(folder, out)):
        results = Results.read(graded[i % len(graded)])
        results.extra.update({"submission": sub.key, CONTENT_HASH: content_hash(sub.path), "students": sub.students})
        write_results(out / "results" / f"{sub.key}.json", results)


def stages(folder: Path, roster: Path, autograder: Path, out: Path) -> dict:
    """Every stage after grading, timed as write_gradebook runs them; the process's peak memory; the report's size."""
    from attn_ref.grade.classroom import gradebook, report
    from attn_ref.grade.classroom.batch import BatchOptions, plan_batch
    from attn_ref.grade.classroom.canvas import write_canvas
    from attn_ref.grade.classroom.mistakes import write_mistakes
    from attn_ref.grade.classroom.spreadsheet import write_csv
    from attn_ref.grade.classroom.written_pages import merge_written_scores, write_written_pages

    times: dict[str, tuple[float, float]] = {}

    @contextlib.contextmanager
    def stage(name: str):
        cpu, start = cpu_seconds(), time.perf_counter()
        yield
        times[name] = (time.perf_counter() - start, cpu_seconds() - cpu)

    with stage("discover"):
        batch = plan_batch(folder, autograder, out, BatchOptions(progress=False))
    assert not batch.todo, f"{len(batch.todo)} submissions without results"
    checks = batch.autograder.checks
    with stage("gradebook read"):
        book = gradebook.collect(out, list(batch.subs), checks)
        book.warnings += gradebook.shared_students(book)
    with stage("grades.csv"):
        fields = ["name", "sid", "email", "submission", *book.units, *book.written_units, "total", "status"]
        write_csv(out / "grades.csv", fields, book.rows)
    with stage("summary.png"):
        gradebook._summary_png(out / "summary.png", book)
    with stage("mistakes"):
        write_mistakes(out, book)
    with stage("similarity"):
        measured = report.measure(book)
    with stage("report"):
        report.write_report(out / "report.html", book, measured)
    with stage("canvas files"):
        write_canvas(out, book, roster)
    with stage("written pages"):
        if checks.written:
            write_written_pages(out / "written", book)
            merge_written_scores(out / "written", book)
    page = (out / "report.html").read_text()
    status = Path("/proc/self/status").read_text()
    return {"times": times, "peak_mb": int(status.split("VmHWM:")[1].split()[0]) / 1024,
            "report_bytes": len(page.encode()), "pairs": sum(len(m.pairs) for m in measured),
            "written": len(checks.written)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--release", type=Path, help="a built release (attn-ref build --out DIR) to use instead of building one")
    parser.add_argument("--hostile", action="store_true", help="the first submission as large as an attacker makes it")
    parser.add_argument("--one", nargs=4, metavar=("FOLDER", "ROSTER", "AUTOGRADER", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # one size, in a process of its own (run by main below)
        print(json.dumps(stages(*map(Path, args.one))))
        return
    sizes = sorted(int(n) for n in args.sizes.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        release = args.release or _build(tmp / "release")
        autograder, solution = release / "autograder/lab-autograder.zip", release / "solutions/lab/lab.ipynb"
        nbs = notebooks(solution, autograder, sizes[-1], args.seed)
        rng = random.Random(args.seed)
        export(tmp / "sample", nbs[:args.sample], rng)
        wall, cpu = grade_sample(tmp / "sample", autograder, tmp / "sample-graded", args.jobs)
        rows = {}
        for n in sizes:
            roster = export(tmp / f"class-{n}", nbs[:n], random.Random(args.seed), args.hostile)
            copy_results(tmp / "sample-graded", tmp / f"class-{n}", tmp / f"out-{n}")
            done = subprocess.run([sys.executable, __file__, "--one", str(tmp / f"class-{n}"), str(roster), str(autograder),
                                   str(tmp / f"out-{n}")], capture_output=True, text=True, check=True)
            rows[n] = json.loads(done.stdout.strip().splitlines()[-1])
            shutil.rmtree(tmp / f"out-{n}")
    _print(sizes, rows, args.sample, wall, cpu)


def _build(out: Path) -> Path:
    from attn_ref.release.build import build

    build(out, HERE.parent / "course", only="lab")
    return out


def _print(sizes: list[int], rows: dict, sample: int, wall: float, cpu: float) -> None:
    print(f"a lab class at {', '.join(map(str, sizes))} submissions; {len(os.sched_getaffinity(0))} cores; per stage: wall s / CPU s "
          "(of the TA's process and all under it) / CPU ms per submission; the machine is shared: CPU is the measure")
    print(f"{'stage':16}" + "".join(f"{f'n = {n}':>32}" for n in sizes))

    def cell(w: float, c: float, n: int) -> str:
        return f"{w:9.2f} /{c:8.2f} / {c / n * 1000:7.1f}"

    print(f"{'grading':16}" + "".join(cell(wall / sample * n, cpu / sample * n, n) for n in sizes)
          + f"   (measured on {sample} submissions, --jobs; the rest copied)")
    for name in STAGES:
        if name == "written pages" and not rows[sizes[0]]["written"]:
            print(f"{name:16}  (the lab has no written questions)")
            continue
        print(f"{name:16}" + "".join(cell(*rows[n]["times"][name], n) for n in sizes))
    print(f"{'after grading':16}" + "".join(cell(sum(w for w, _ in rows[n]["times"].values()),
                                                 sum(c for _, c in rows[n]["times"].values()), n) for n in sizes))
    print(f"{'peak memory':16}" + "".join(f"{rows[n]['peak_mb']:29.0f} MB" for n in sizes) + "   (VmHWM of the TA's process)")
    print(f"{'report.html':16}" + "".join(f"{rows[n]['report_bytes'] / 1024:19.0f} KiB, {rows[n]['pairs']:5d} pairs" for n in sizes))


if __name__ == "__main__":
    main()
