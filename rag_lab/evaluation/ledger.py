"""The ledger: every comparison a run decided, one row each, so one comparison cannot be given two
answers in two notebooks without the run saying so.

A notebook's kernel gets ``RAG_LAB_LEDGER`` (``<run>/ledger/<notebook>.csv``) from the runner; each
decided table is appended to that file where it is made (``record``, or ``recorded`` around the call
that made it), with the notebook named by the file. With the variable unset nothing is written, so a
notebook opened by hand or a unit test leaves no trace. After the run, ``gather`` stacks the
notebooks' files into ``comparisons.csv`` and ``conflicts`` names every comparison with two answers:

- two sets of numbers (n, units, diff, interval, p) for one comparison: the same dataset, metric,
  setting (k or budget, and the claim's threshold when it is not 0), method and baseline;
- two verdicts for one comparison within one family.

Why our own module: a CSV appended per table and a group-by; no library keeps "decisions made".
"""
from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..caching.atomic import atomic_path

LEDGER_ENV = "RAG_LAB_LEDGER"
LEDGER_DIR = "ledger"                    # <run>/ledger/<notebook>.csv, one file per notebook
COMPARISONS = "comparisons.csv"          # <run>/comparisons.csv: every notebook's rows
COLUMNS = ["notebook", "dataset", "metric", "setting", "method", "baseline", "n", "units", "design_effect", "diff",
           "ci_low", "ci_high", "interval", "p", "p_holm", "family", "family_size", "mde", "verdict", "reason"]
KEY = ["dataset", "metric", "setting", "method", "baseline"]       # what makes two rows one comparison
NUMBERS = ["n", "units", "diff", "ci_low", "ci_high", "p"]          # what must then be equal
RTOL, ATOL = 1e-6, 1e-9                                             # a CSV round trip, another machine's last digit
BASELINE_COLUMNS = ("baseline", "below", "rival")                   # how tables name the other side
NEEDED = ("method", "metric", "diff", "n", "ci_low", "ci_high", "interval", "p", "p_holm", "family", "family_size",
          "verdict")
_AT = re.compile(r"^(?P<metric>.+)@(?P<k>\d+)(?P<tok>tok)?$")


def split_metric(column: str) -> tuple[str, str]:
    """``ctx_recall@5`` -> (ctx_recall, k=5); ``ctx_recall@136tok`` -> (ctx_recall, 136 tokens); a name
    without ``@`` -> (name, "")."""
    m = _AT.match(str(column))
    if m is None:
        return str(column), ""
    return m["metric"], f"{m['k']} tokens" if m["tok"] else f"k={m['k']}"


def _setting(metric_setting: str, threshold) -> str:
    if threshold is None or (isinstance(threshold, float) and math.isnan(threshold)) or float(threshold) == 0:
        return metric_setting
    return f"{metric_setting}; threshold {float(threshold):+g}".lstrip("; ")


def interval_kind(interval: str) -> str:
    """The interval's procedure and whether it is adjusted for its family: the package's intervals are
    each comparison's own (unadjusted) unless their label says simultaneous or Holm."""
    text = str(interval)
    if text.startswith("none") or text in ("", "nan"):
        return text
    adjusted = any(w in text.lower() for w in ("simultaneous", "holm", "adjusted"))
    return text if adjusted else f"{text}; unadjusted"


def ledger_rows(table: pd.DataFrame, dataset: str, notebook: str = "") -> pd.DataFrame:
    """A decided table (``uncertainty.decide``'s columns after the method, its baseline — ``baseline``,
    ``below`` or ``rival`` — and ``metric``) as ledger rows (``COLUMNS``). A ``setting`` column of the
    table is kept only for a metric without k or budget; a ``condition`` column (GraLC's document lengths)
    is added to the setting: the same questions on other texts are another comparison."""
    missing = [c for c in NEEDED if c not in table.columns]
    other = next((c for c in BASELINE_COLUMNS if c in table.columns), None)
    if missing or other is None:
        raise ValueError(f"a ledger records decided tables (method, baseline/below/rival, metric and the test's "
                         f"columns); this one lacks {missing + ([] if other else ['baseline'])}")
    if not str(dataset):
        raise ValueError("a ledger row needs the dataset its comparison was made on; got an empty name")
    rows = []
    for _, r in table.iterrows():
        metric, at = split_metric(r["metric"])
        if not at and "setting" in table.columns and pd.notna(r["setting"]):
            at = str(r["setting"])
        if "condition" in table.columns and pd.notna(r["condition"]) and str(r["condition"]):
            at = f"{at}; {r['condition']}" if at else str(r["condition"])     # GraLC's length conditions
        rows.append({"notebook": notebook, "dataset": str(dataset), "metric": metric,
                     "setting": _setting(at, r.get("threshold")), "method": r["method"], "baseline": r[other],
                     "n": r["n"], "units": r.get("units", r["n"]), "design_effect": r.get("design_effect", math.nan),
                     "diff": r["diff"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                     "interval": interval_kind(r["interval"]), "p": r["p"], "p_holm": r["p_holm"],
                     "family": r["family"], "family_size": r["family_size"], "mde": r.get("mde", math.nan),
                     "verdict": r["verdict"], "reason": r.get("reason", "") if pd.notna(r.get("reason", "")) else ""})
    return pd.DataFrame(rows, columns=COLUMNS)


def append(path: str | os.PathLike, rows: pd.DataFrame) -> Path:
    """Append ``rows`` to the ledger CSV at ``path``: the old rows and the new written to a temporary
    file, then renamed over it, so a reader never meets half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = read(path) if path.is_file() else pd.DataFrame(columns=COLUMNS)
    both = pd.concat([f for f in (old, rows[COLUMNS]) if not f.empty], ignore_index=True) if len(old) or len(rows) \
        else pd.DataFrame(columns=COLUMNS)
    with atomic_path(path) as tmp:
        both.to_csv(tmp, index=False)
    return path


def read(path: str | os.PathLike) -> pd.DataFrame:
    """One ledger CSV, with a clear error when it is not one."""
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path} is not a ledger: it lacks the columns {missing}")
    for c in ("family", "verdict", "reason", "setting", "interval"):
        df[c] = df[c].fillna("").astype(str)
    return df[COLUMNS]


def record(table: pd.DataFrame, dataset: str, path: str | os.PathLike | None = None) -> Path | None:
    """Append a decided table's comparisons to this notebook's ledger (``path``, else $RAG_LAB_LEDGER; the
    notebook is the file's name). Nothing is written, and None returned, when neither is set or the
    table is empty."""
    target = path or os.environ.get(LEDGER_ENV)
    if not target or table is None or table.empty:
        return None
    return append(target, ledger_rows(table, dataset, Path(target).stem))


def recorded(table: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """``table``, after ``record``-ing it: wraps the call that decides a table (``recorded(paired_differences(...),
    name)``)."""
    record(table, dataset)
    return table


def gather(folder: str | os.PathLike, out: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every ``<notebook>.csv`` ledger in ``folder`` stacked (in notebook order), a row recorded twice in
    the same notebook kept once; written to ``out`` (the run's ``comparisons.csv``) when given, even when
    empty, so a run's ledger always exists."""
    files = sorted(Path(folder).glob("*.csv")) if Path(folder).is_dir() else []
    frames = [read(f) for f in files]
    frames = [f for f in frames if not f.empty]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    rows = rows.drop_duplicates(ignore_index=True)    # one table read twice in a notebook (a paragraph and its details)
    if out is not None:
        with atomic_path(Path(out)) as tmp:
            rows.to_csv(tmp, index=False)
    return rows


def _same(a, b) -> bool:
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return math.isclose(fa, fb, rel_tol=RTOL, abs_tol=ATOL)


def _numbers(row: Mapping) -> str:
    def shown(v):
        return "n/a" if pd.isna(v) else f"{v:.4g}" if isinstance(v, float) else str(v)
    return (f"n={shown(row['n'])}, units={shown(row['units'])}, diff={shown(row['diff'])} "
            f"[{shown(row['ci_low'])}, {shown(row['ci_high'])}], p={shown(row['p'])}")


def conflicts(rows: pd.DataFrame) -> list[dict]:
    """Every comparison given two answers: ``{"kind", "comparison", "notebooks", "detail"}``, kind
    "numbers" (two sets of ``NUMBERS`` for one ``KEY``) or "verdicts" (two verdicts for one ``KEY`` in
    one family)."""
    out = []
    if rows.empty:
        return out
    for key, g in rows.groupby(KEY, sort=False, dropna=False):
        what = _comparison(key)
        first = g.iloc[0]
        differ = [r for _, r in g.iterrows() if not all(_same(first[c], r[c]) for c in NUMBERS)]
        if differ:
            sets = {}
            for _, r in g.iterrows():
                sets.setdefault(_numbers(r), []).append(r["notebook"])
            out.append({"kind": "numbers", "comparison": what, "notebooks": sorted(set(g["notebook"])),
                        "detail": "; ".join(f"{', '.join(dict.fromkeys(nbs))}: {nums}" for nums, nbs in sets.items())})
        for family, f in g.groupby("family", sort=False):
            words = list(dict.fromkeys(f["verdict"]))
            if len(words) > 1:
                out.append({"kind": "verdicts", "comparison": what, "notebooks": sorted(set(f["notebook"])),
                            "detail": f"family {family!r}: " + "; ".join(
                                f"{v} ({', '.join(dict.fromkeys(f.loc[f['verdict'] == v, 'notebook']))})" for v in words)})
    return out


def _comparison(key: Sequence) -> str:
    dataset, metric, setting, method, baseline = key
    return f"{dataset}: {method} - {baseline} on {metric}" + (f" ({setting})" if setting else "")


def gather_run(run_dir: str | os.PathLike) -> dict:
    """After a run: ``<run>/ledger/*.csv`` into ``<run>/comparisons.csv``; what the manifest records:
    the file, its row count per notebook and every conflict."""
    run_dir = Path(run_dir)
    rows = gather(run_dir / LEDGER_DIR, run_dir / COMPARISONS)
    return {"path": COMPARISONS, "rows": int(len(rows)),
            "per_notebook": {str(k): int(v) for k, v in rows["notebook"].value_counts(sort=False).items()},
            "conflicts": conflicts(rows)}


def ledger_lines(manifest: Mapping, run_dir: str | os.PathLike = "") -> list[str]:
    """What ``rag_lab run`` prints of the ledger: where it is, its rows, and every conflict (a failure)."""
    book = manifest.get("ledger")
    if not book:
        return []
    where = Path(run_dir) / book["path"] if run_dir else book["path"]
    counts = ", ".join(f"{nb} {n}" for nb, n in book.get("per_notebook", {}).items()) or "none"
    lines = [f"ledger: {book['rows']} comparisons decided ({counts}) -> {where}"]
    found = book.get("conflicts", [])
    if found:
        lines.append(f"ledger: FAILED: {len(found)} comparison(s) given two answers in this run:")
        lines.extend(f"  ledger: CONFLICT ({c['kind']}) {c['comparison']}: {c['detail']}" for c in found)
    else:
        lines.append("ledger: no comparison was given two answers")
    return lines
