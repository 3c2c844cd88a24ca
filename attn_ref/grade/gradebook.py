"""The gradebook of a class: grades.csv (a row per student), the written answers' pages and a summary,
written from whatever results exist now (a partial run gives a partial gradebook)."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import statistics
from pathlib import Path

from .discover import Submission
from .results import write_atomically


def units(checks: dict) -> list[dict]:
    return checks["units"]


def _status(results: dict) -> str:
    return results.get("extra_data", {}).get("status", "error: no results")


def _rows(out: Path, subs: list[Submission], checks: dict) -> list[dict]:
    names = [u["name"] for u in units(checks)]
    rows = []
    for sub in subs:
        try:
            results = json.loads((out / "results" / f"{sub.key}.json").read_text())
        except (OSError, ValueError):
            results = {"tests": [], "score": 0, "extra_data": {"status": "error: not graded yet"}}
        by_unit = {t["name"].split(":")[0]: t["score"] for t in results.get("tests", [])}
        people = sub.students or [{"name": "", "sid": "", "email": ""}]
        for person in people:
            row = {"name": person["name"] or sub.key, "sid": person["sid"], "email": person["email"], "submission": sub.path.name}
            row.update({u: f"{by_unit.get(u, 0):g}" for u in names})
            row["total"] = f"{results.get('score', 0):g}"
            row["status"] = _status(results)
            rows.append(row)
    return rows


def write_gradebook(out: Path, subs: list[Submission], checks: dict) -> list[dict]:
    """grades.csv, written/<question>.html and summary.png, from whatever results exist now."""
    with open(out / "locks" / "gradebook.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs on one folder take turns here
        rows = _rows(out, subs, checks)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["name"])
        writer.writeheader()
        writer.writerows(rows)
        write_atomically(out / "grades.csv", buffer.getvalue().encode())
        if checks.get("written"):
            from .written import write_written_pages

            write_written_pages(out / "written", subs, checks)
        _summary_png(out / "summary.png", rows, checks)
    return rows


def summary_lines(rows: list[dict], checks: dict) -> list[str]:
    names = [u["name"] for u in units(checks)]
    lines = [f"{'question':10} {'mean':>7} {'median':>7} {'max':>7}"]
    for unit in names + ["total"]:
        values = [float(r[unit]) for r in rows]
        if values:
            lines.append(f"{unit:10} {statistics.mean(values):7.2f} {statistics.median(values):7.2f} {max(values):7.2f}")
    problems = {}
    for row in rows:
        if row["status"] != "ok":
            problems.setdefault(row["status"], []).append(row["name"])
    lines.append(f"{len(rows) - sum(len(v) for v in problems.values())} ok, {sum(len(v) for v in problems.values())} not ok")
    for status, names in sorted(problems.items()):
        lines.append(f"  {len(names)} × {status}: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}")
    return lines


def _summary_png(path: Path, rows: list[dict], checks: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [u["name"] for u in units(checks)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    left.hist([float(r["total"]) for r in rows], bins=20)
    left.set_xlabel("total score")
    left.set_ylabel("students")
    left.set_title(f"{checks['assignment']}: totals")
    right.bar(names, [statistics.mean(float(r[u]) for r in rows) if rows else 0 for u in names])
    right.set_title("mean score per question")
    right.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=100)
    plt.close(fig)
    write_atomically(path, image.getvalue())
