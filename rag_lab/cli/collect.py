"""``python -m rag_lab collect``: every run's tables gathered into one tidy table (after BERGEN's
one-results-file habit), so a sweep's results are one CSV a notebook can filter and plot.

One row per table cell: ``run_id, notebook, status, reasoner, param_hash, parameters`` (JSON of
the parameters that differ from the notebook's defaults), a ``param.<name>`` column for each
parameter whose value differs between the collected runs, then ``table, row, label, column,
value``. ``row`` is the 0-based data row; ``label`` is the row's index as the table was saved
(the leading index columns of a pandas CSV joined by " / ", else its first column); ``column``
joins multi-level headers by " / "; ``value`` is the cell's text as written (empty cells are
left out). Cells of named index columns are rows too, so every table pivots back to itself.

The CSVs are the run folders' copies (``tables/<notebook>/``), so later runs never change an
earlier run's numbers. Only notebooks that finished are gathered unless ``--all`` is given.
"""
from __future__ import annotations

import csv
import sys
import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
COLUMNS = ["run_id", "notebook", "status", "reasoner", "param_hash", "parameters"]
CELL_COLUMNS = ["table", "row", "label", "column", "value"]


def add_arguments(parser):
    from ..runs.runner import RUNS_DIR

    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help="the runs folder")
    parser.add_argument("--out", type=Path, default=None, help="the CSV to write (default: RUNS_DIR/results.csv)")
    parser.add_argument("--all", action="store_true", help="also gather tables of notebooks that failed")


def table_cells(path: Path) -> list[dict[str, Any]]:
    """The cells of a CSV written by pandas (``DataFrame.to_csv``, index and multi-level headers allowed).

    pandas leaves the header cells above the index blank, so the number of leading blanks in the
    first line is the number of index columns; further header lines (multi-level columns) also
    start blank; a line naming the index levels with nothing after them follows the headers.
    A first line with no leading blank is a one-line header whose first column is the label."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        lines = [line for line in csv.reader(fh) if line]
    if not lines:
        return []
    first = lines[0]
    blank = next((i for i, cell in enumerate(first) if cell != ""), len(first))
    n_index = max(1, min(blank, len(first) - 1))
    header, i = [first], 1
    while blank and i < len(lines) and not any(lines[i][:n_index]) and any(lines[i][n_index:]):
        header.append(lines[i])
        i += 1
    index_names = [first[0]] if not blank else [""] * n_index
    if blank and i < len(lines) and all(lines[i][:n_index]) and not any(lines[i][n_index:]):
        index_names, i = lines[i][:n_index], i + 1
    columns = [" / ".join(h[j] for h in header if j < len(h) and h[j]) for j in range(n_index, len(first))]
    out = []
    for row, line in enumerate(lines[i:]):
        label = " / ".join(line[:n_index])
        named_index = [(name, value) for name, value in zip(index_names, line[:n_index]) if name]
        for column, value in named_index + list(zip(columns, line[n_index:])):
            if value != "":
                out.append({"row": row, "label": label, "column": column, "value": value})
    return out


def collect(runs_dir: Path, include_failed: bool = False):
    """The tidy DataFrame of every table of every (finished) notebook run under ``runs_dir``."""
    import pandas as pd

    from ..runs.runner import NOT_HASHED, canonical, read_runs, reasoner_of

    runs, rows = [], []
    for folder, manifest in read_runs(runs_dir):
        run_id = folder.relative_to(runs_dir).as_posix()
        for e in manifest["notebooks"]:
            if e.get("status") != "ok" and not include_failed:
                continue
            params = {k: v for k, v in e.get("parameters", {}).items() if k not in NOT_HASHED}
            runs.append(params)
            head = {"run_id": run_id, "notebook": e.get("notebook"), "status": e.get("status"),
                    "reasoner": e.get("reasoner") or reasoner_of(params)["reasoner"],
                    "param_hash": e.get("param_hash", ""),
                    "parameters": json.dumps(canonical(e.get("changed", params)), sort_keys=True), "_params": params}
            for rel in e.get("tables", []):
                path = folder / rel
                if not path.is_file():
                    log.warning("%s: table %s is missing; skipped", run_id, rel)
                    continue
                name = Path(*Path(rel).parts[2:]).with_suffix("").as_posix()  # tables/<notebook>/<name>.csv
                rows += [{**head, "table": name, **cell} for cell in table_cells(path)]
    varying = _varying(runs)
    for r in rows:
        params = r.pop("_params")
        for key in varying:
            value = canonical(params.get(key))
            r[f"param.{key}"] = json.dumps(value) if isinstance(value, (list, dict)) else value
    return pd.DataFrame(rows, columns=COLUMNS + [f"param.{k}" for k in varying] + CELL_COLUMNS)


def _varying(runs: list[dict[str, Any]]) -> list[str]:
    """Parameters whose value is not the same in every run (missing counts as a value)."""
    from ..runs.runner import canonical

    keys = sorted({k for params in runs for k in params})
    return [k for k in keys if len({json.dumps(canonical(p.get(k)), sort_keys=True) for p in runs}) > 1]


def run(args) -> int:
    from ..caching.atomic import atomic_path

    runs_dir = Path(args.runs_dir)
    table = collect(runs_dir, include_failed=args.all)
    if table.empty:
        print(f"nothing to collect: no table in the {'' if args.all else 'finished '}notebook runs under {runs_dir} "
              f"(run `python -m rag_lab run NOTEBOOK` first{'' if args.all else ', or add --all for failed runs'}); "
              "no file written", file=sys.stderr)
        return 1
    out = args.out or runs_dir / "results.csv"
    with atomic_path(out) as tmp:
        table.to_csv(tmp, index=False)
    print(f"collected {len(table)} cells from {table[['run_id', 'notebook', 'table']].drop_duplicates().shape[0]} "
          f"tables of {table['run_id'].nunique()} runs -> {out}")
    return 0
