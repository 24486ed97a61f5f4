"""Which rows of a table moved against the reference, and which near-tie can explain each.

A table that differs from its committed copy is taken apart row by row: every row whose values
moved is named with its method, data set, question and metric (as far as the table has those
columns), and beside it the near-tie that covers that row (``core.ties.covers``) from this run's
notes or the reference run's (committed beside the tables as ``near_ties.jsonl``, so a decision
that flipped is seen from both sides) — or ``NOT_EXPLAINED``. A note of another method, data set
or question never explains a row, so a changed method cannot hide behind a near-tie elsewhere.

Own code: pandas compares frames (``DataFrame.compare``) only when they have the same labels and
shape, and says nothing about what a row means.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

NOT_EXPLAINED = "not explained by a near-tie: a changed method, data or setting"
NEAR_TIES_FILE = "near_ties.jsonl"              # the reference run's notes, beside its tables
QUESTION_COLUMNS = ("question_id", "question", "qid")
METHOD_COLUMNS = ("method", "baseline")         # a comparison row is moved by either side's notes
LABEL_COLUMNS = (*METHOD_COLUMNS, *QUESTION_COLUMNS, "dataset", "metric", "k", "level", "hops")
SHOWN_FIELDS = 4                                # a row or a list of columns, as far as a line shows it


def text_columns(df: pd.DataFrame) -> list:
    return [c for c in df.columns if pd.api.types.is_object_dtype(df[c]) or pd.api.types.is_string_dtype(df[c])]


def _keys(df: pd.DataFrame, columns: list) -> list[tuple] | None:
    """Each row's values in ``columns`` when they name rows uniquely, else None."""
    if not columns:
        return None
    keys = [tuple(row) for row in df[columns].astype(str).itertuples(index=False)]
    return keys if len(set(keys)) == len(keys) else None


def _key_columns(ref: pd.DataFrame, new: pd.DataFrame) -> list:
    """The columns that name a row: the label columns both tables have, else a first text column
    (a written index)."""
    both = [c for c in ref.columns if c in new.columns]
    labels = [c for c in both if c in LABEL_COLUMNS]
    if labels:
        return labels
    first = both[:1]
    return first if first and first[0] in text_columns(ref) else []


def _aligned(new: pd.DataFrame, ref: pd.DataFrame) -> list[tuple]:
    """(reference row, new row) position pairs, None on the side a row is missing from: by the
    columns that name rows when they name them uniquely in both tables, else by position."""
    columns = _key_columns(ref, new)
    ref_keys, new_keys = _keys(ref, columns), _keys(new, columns)
    if ref_keys is not None and new_keys is not None:
        where = {k: i for i, k in enumerate(new_keys)}
        pairs = [(i, where.get(k)) for i, k in enumerate(ref_keys)]
        return pairs + [(None, j) for j, k in enumerate(new_keys) if k not in set(ref_keys)]
    n = max(len(ref), len(new))
    return [(i if i < len(ref) else None, i if i < len(new) else None) for i in range(n)]


def _label(row: pd.Series, columns: Sequence[str]):
    for c in columns:
        if c in row.index and not pd.isna(row[c]):
            return str(row[c])
    return None


def _metric(row: pd.Series, moved_columns: list) -> str:
    if "metric" in row.index and not pd.isna(row["metric"]):
        k = row.get("k")
        return f"{row['metric']}@{int(k)}" if pd.api.types.is_number(k) and not pd.isna(k) else str(row["metric"])
    return _first(str(c) for c in moved_columns)


def _first(parts) -> str:
    parts = list(parts)
    more = f", ... ({len(parts) - SHOWN_FIELDS} more)" if len(parts) > SHOWN_FIELDS else ""
    return ", ".join(parts[:SHOWN_FIELDS]) + more


def differing_rows(new: pd.DataFrame, ref: pd.DataFrame, table: str, same, stable_columns, stable_rows,
                   dataset: str | None = None) -> list[dict]:
    """Every row of ``table`` that moved: ``{"table", "row", "method", "dataset", "question", "metric",
    "was", "now"}`` (``same``/``stable_*``: the reference check's comparison and the columns and rows it
    keeps). ``dataset``: the run's, for tables without a data-set column. Columns that differ: one
    row naming the table's columns."""
    if list(new.columns) != list(ref.columns):
        return [{"table": table, "row": "columns", "method": None, "dataset": dataset, "question": None,
                 "metric": "columns", "was": list(ref.columns), "now": list(new.columns)}]
    keep_ref, keep_new = stable_rows(ref), stable_rows(new)
    # a frame written with its index (methods as rows: "Unnamed: 0") names the row's method there
    index = ref.columns[0] if (len(ref.columns) and str(ref.columns[0]).startswith("Unnamed: 0")
                               and not any(c in ref.columns for c in METHOD_COLUMNS)) else None
    columns = stable_columns(ref)
    out = []
    for i, j in _aligned(new, ref):
        if (i is not None and not keep_ref.iloc[i]) or (j is not None and not keep_new.iloc[j]):
            continue
        a = ref.iloc[i] if i is not None else None
        b = new.iloc[j] if j is not None else None
        moved = [c for c in columns if a is None or b is None or not same(a[c], b[c])]
        if not moved:
            continue
        row = a if a is not None else b
        method = [str(row[c]) for c in METHOD_COLUMNS if c in row.index and not pd.isna(row[c])] or (
            [str(row[index])] if index is not None and not pd.isna(row[index]) else None)
        out.append({"table": table, "row": i if i is not None else f"new {j}", "method": method,
                    "dataset": _label(row, ("dataset",)) or dataset, "question": _label(row, QUESTION_COLUMNS),
                    "metric": _metric(row, moved),
                    "was": _side(a, b, moved[0]), "now": _side(b, a, moved[0])})
    return out


def _side(row, other, column) -> str:
    """One side of a moved row: its value in the first moved column; a whole row when the other side has none."""
    if row is None:
        return "(no row)"
    if other is None:
        return _first(f"{c}={shown_value(v)}" for c, v in row.items())
    return shown_value(row[column])


def shown_value(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _methods_of(row: dict, near_ties) -> list:
    """The row's methods; for a table without a method column, the noted methods its name contains
    (``raptor_tree`` -> raptor). None found: no note can explain the row."""
    if row["method"]:
        return row["method"]
    words = set(str(row["table"]).lower().replace("-", "_").split("_"))
    return sorted({t.labels.get("method") for t in near_ties if t.labels.get("method") in words})


def explain(rows: Sequence[dict], near_ties) -> list[dict]:
    """``rows`` (``differing_rows``) each with ``"explained_by"``: the first note that covers it
    (``core.ties.covers``), described, or ``NOT_EXPLAINED``."""
    from ..core.ties import NearTie, covers

    notes = [NearTie(**t) if isinstance(t, dict) else t for t in near_ties]
    out = []
    for row in rows:
        methods = _methods_of(row, notes)
        found = next((t for t in notes for m in methods if covers(t, m, row["dataset"], row["question"])), None)
        out.append({**row, "explained_by": found.describe() if found is not None else NOT_EXPLAINED})
    return out


def row_line(row: dict) -> str:
    """One moved row and what explains it, for the lines ``rag_lab run`` prints."""
    where = ", ".join(p for p in ("/".join(row["method"]) if row["method"] else None, row["dataset"],
                                  row["question"], row["metric"]) if p)
    because = row["explained_by"]
    return f"    {where or 'row ' + str(row['row'])}: {row['was']} -> {row['now']}: " + (
        because if because == NOT_EXPLAINED else f"near-tie {because}")
