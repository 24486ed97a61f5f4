"""``python -m rag_lab runs``: every notebook run under the runs folder (sweeps' attempts included),
newest first, two short lines each: when it started, status, notebook, seconds, reasoner (and judge)
and the parameters that differ from the notebook's defaults; then the run folder, parameter hash and,
for a failure, the cell and error. Long values are cut so a line fits a terminal; ``manifest.json``
in the run folder has them whole."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WIDTH = 110      # characters a listed line may take; longer values end in "..."


def add_arguments(parser):
    from ..runs.runner import RUNS_DIR

    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help="the runs folder")


def compact(parameters: dict[str, Any]) -> str:
    """``k=3 limit=4``: parameters as a short line (values as JSON)."""
    return " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(parameters.items()))


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 3, 0)] + "..."


def run_rows(runs_dir: Path) -> list[dict[str, Any]]:
    """One row per notebook run, newest first (by start time; runs recorded without one last)."""
    from ..runs.runner import NOT_HASHED, read_runs, reasoner_of

    rows = []
    for folder, manifest in read_runs(runs_dir):
        for e in manifest["notebooks"]:
            params = {k: v for k, v in e.get("parameters", {}).items() if k not in NOT_HASHED}
            failure = e.get("failure") or {}
            rows.append({
                "run": folder.relative_to(runs_dir).as_posix(), "status": e.get("status"),
                "started": e.get("started") or manifest.get("started") or "",
                "notebook": e.get("notebook"), "hash": e.get("param_hash", ""), "seconds": e.get("seconds"),
                "reasoner": e.get("reasoner") or reasoner_of(params)["reasoner"], "judge": e.get("judge") or "",
                "parameters": compact(e.get("changed", params)),
                "failure": f"cell {failure.get('cell')}: {failure.get('error', '')}" if failure else ""})
    return sorted(rows, key=lambda r: (r["started"], r["run"]), reverse=True)


def run_lines(row: dict[str, Any]) -> list[str]:
    """The two lines of one run (a third with its failure)."""
    started = row["started"].replace("T", " ")[:16] or "(no start time)"
    seconds = f"{row['seconds']:.1f} s" if isinstance(row["seconds"], (int, float)) else "-"
    who = row["reasoner"] + (f", judge {row['judge']}" if row["judge"] else "")
    head = f"{started}  {row['status'] or '?':7s} {row['notebook']}  {seconds}  {who}"
    params = row["parameters"] or "defaults"
    lines = [cut(f"{head}  {params}", max(WIDTH, len(head) + 12)),
             f"    {row['run']}  (hash {row['hash']})"]
    if row["failure"]:
        lines.append(cut(f"    failed at {row['failure']}", WIDTH))
    return lines


def run(args) -> int:
    rows = run_rows(Path(args.runs_dir))
    if not rows:
        print(f"no runs in {args.runs_dir}")
        return 0
    for row in rows:
        print("\n".join(run_lines(row)))
    bad = sum(row["status"] != "ok" for row in rows)
    print(f"{len(rows)} notebook runs, {bad} not ok, in {args.runs_dir} (newest first; each run's manifest.json "
          "has its parameters whole)")
    return 0
