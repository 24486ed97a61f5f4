"""``python -m rag_lab runs``: every notebook run under the runs folder (sweeps' attempts included),
one row each: folder, status, notebook, parameter hash, seconds, reasoner, the parameters that
differ from the notebook's defaults, and for a failure the cell and error."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def add_arguments(parser):
    from ..runs.runner import RUNS_DIR

    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help=f"the runs folder (default {RUNS_DIR})")


def compact(parameters: dict[str, Any]) -> str:
    """``k=3 limit=4``: parameters as a short line (values as JSON)."""
    return " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(parameters.items()))


def run_rows(runs_dir: Path) -> list[dict[str, Any]]:
    from ..runs.runner import NOT_HASHED, read_runs, reasoner_of

    rows = []
    for folder, manifest in read_runs(runs_dir):
        for e in manifest["notebooks"]:
            params = {k: v for k, v in e.get("parameters", {}).items() if k not in NOT_HASHED}
            failure = e.get("failure") or {}
            rows.append({
                "run": folder.relative_to(runs_dir).as_posix(), "status": e.get("status"),
                "notebook": e.get("notebook"), "hash": e.get("param_hash", ""), "seconds": e.get("seconds"),
                "reasoner": e.get("reasoner") or reasoner_of(params)["reasoner"], "judge": e.get("judge") or "",
                "parameters": compact(e.get("changed", params)),
                "failure": f"cell {failure.get('cell')}: {failure.get('error', '')}" if failure else ""})
    return rows


def run(args) -> int:
    import pandas as pd

    rows = run_rows(Path(args.runs_dir))
    if not rows:
        print(f"no runs in {args.runs_dir}")
        return 0
    table = pd.DataFrame(rows)
    if not table["failure"].any():
        table = table.drop(columns="failure")
    with pd.option_context("display.max_columns", None, "display.width", 250, "display.max_colwidth", 70):
        print(table.to_string(index=False))
    print(f"{len(table)} notebook runs, {int((table.status != 'ok').sum())} not ok, in {args.runs_dir}")
    return 0
