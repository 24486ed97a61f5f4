"""The committed reference results, and the tables a run changed against them.

``figures/<notebook>/`` in the repository holds the tables (CSV + Markdown) and PNGs of the last
full offline ``make reproduce``. A run of a notebook with its default parameters writes into that
same folder; this module reads the committed copy of each table it wrote from git (``HEAD``) and
names every table whose values differ, so a change that moves a paper table never goes unnoticed.
Columns that measure the machine rather than the method (seconds, latency, memory, throughput)
are left out: they differ from run to run. The reference is refreshed on purpose, by committing
the changed files in a commit of their own.

Each differing table is taken apart row by row (``moved_rows``): every moved (method, data set,
question, metric) row is named with the near-tie that can explain it — this run's notes or the
reference run's, committed beside its tables as ``near_ties.jsonl`` (``write_reference_near_ties``) —
or as not explained by a near-tie.

Runs with other parameters, or into another folder, are not compared (their tables are not the
reference's), and neither is anything outside a git checkout. A run with other parameters does not
write into the repository's ``figures/`` at all (``figures_folder``): its figures and tables go to
its run folder's ``figures/<notebook>/``, unless asked otherwise (``rag_lab run --write-reference``).
"""
from __future__ import annotations

import io
import math
import re
import subprocess
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..evaluation.provenance import ROOT
from .moved_rows import NEAR_TIES_FILE, NOT_EXPLAINED, differing_rows, explain, row_line, shown_value, text_columns

REFERENCE_DIR = ROOT / "figures"
# a column (or, in a long table, a row label) that measures the machine: left out of the comparison
VOLATILE = re.compile(r"second|time|latency|duration|memory|heap|throughput|speed"
                      r"|[_(\s](ms|mb)\b|_s\b|\(s\)|per[ _]s\b|/s\b", re.IGNORECASE)
RTOL, ATOL = 1e-6, 1e-9   # floats written by another machine may differ in their last digits
ROWS_KEPT = 1000          # moved rows a manifest keeps per table (the count is kept whole)
ROWS_SHOWN = 12           # moved rows printed per table


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def _relative(path: Path, root: Path) -> str | None:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return None


def committed_text(path: Path, root: Path = ROOT) -> str | None:
    """The text of ``path`` as committed at ``HEAD`` of the git checkout at ``root``; None when
    there is no such file, no git or no checkout."""
    rel = _relative(path, root)
    return None if rel is None else _git(root, "show", f"HEAD:{rel}")


def committed_tables(folder: Path, root: Path = ROOT) -> list[str]:
    """The file names of the CSV tables committed at ``HEAD`` in ``folder``."""
    rel = _relative(folder, root)
    listing = None if rel is None else _git(root, "ls-tree", "--name-only", "HEAD", f"{rel}/")
    return sorted(Path(line).name for line in (listing or "").splitlines() if line.endswith(".csv"))


def volatile(label) -> bool:
    return isinstance(label, str) and bool(VOLATILE.search(label))


def _stable_columns(df: pd.DataFrame) -> list:
    return [c for c in df.columns if not volatile(str(c))]


def _stable_rows(df: pd.DataFrame) -> pd.Series:
    """Rows whose text labels name no machine measurement (long tables keep e.g. ``seconds`` as a row)."""
    text = text_columns(df)
    if not text:
        return pd.Series(True, index=df.index)
    return ~df[text].apply(lambda col: col.map(volatile)).any(axis=1)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=RTOL, abs_tol=ATOL)
    return (pd.isna(a) and pd.isna(b)) if (pd.isna(a) or pd.isna(b)) else a == b


def table_difference(new: pd.DataFrame, ref: pd.DataFrame) -> str | None:
    """Why ``new`` differs from ``ref`` outside the volatile columns and rows, or None when it does not."""
    if list(new.columns) != list(ref.columns):
        return f"columns differ: {list(ref.columns)} -> {list(new.columns)}"
    if len(new) != len(ref):
        return f"{len(ref)} rows -> {len(new)}"
    keep = _stable_rows(ref) & _stable_rows(new)
    for col in _stable_columns(ref):
        for row in ref.index[keep]:
            a, b = ref.at[row, col], new.at[row, col]
            if not _same(a, b):
                return f"column {col!r}, row {row}: {shown_value(a)} -> {shown_value(b)}"
    return None


def changed_tables(written: Sequence[str | Path], figures_dir: Path, root: Path = ROOT,
                   dataset: str | None = None) -> list[dict]:
    """The tables among ``written`` (paths of files a run wrote into ``figures_dir``) whose values differ
    from their committed copy, and the committed tables of that folder the run did not write.
    Each: ``{"table": name, "why": reason, "rows": the moved rows}`` (``moved_rows.differing_rows``;
    none for a table missing on one side). ``dataset``: the run's, for rows that do not name one."""
    figures_dir = Path(figures_dir)
    out = []
    written_csv = sorted(Path(p) for p in written if str(p).endswith(".csv"))
    for path in written_csv:
        ref_text = committed_text(path, root)
        if ref_text is None:
            out.append({"table": path.stem, "why": "new: no committed reference", "rows": []})
            continue
        new, ref = pd.read_csv(path), pd.read_csv(io.StringIO(ref_text))
        why = table_difference(new, ref)
        if why:
            rows = differing_rows(new, ref, path.stem, _same, _stable_columns, _stable_rows, dataset)
            out.append({"table": path.stem, "why": why, "rows": rows})
    names = {p.name for p in written_csv}
    for name in committed_tables(figures_dir, root):
        if name not in names:
            out.append({"table": Path(name).stem, "why": "in the reference, not written by this run", "rows": []})
    return out


def reference_near_ties(figures_dir: Path, root: Path = ROOT) -> list:
    """The near-ties the reference run noted, committed beside its tables (none when not committed)."""
    from ..core.ties import parse_near_ties

    text = committed_text(Path(figures_dir) / NEAR_TIES_FILE, root)
    return parse_near_ties(text) if text else []


def write_reference_near_ties(near_ties: Sequence, figures_dir: Path) -> Path:
    """This run's near-ties beside its tables (sorted, atomically), to be committed with them as the
    reference's: another run's differing rows are then matched against both sides' notes."""
    from ..caching.atomic import write_text
    from ..core.ties import NearTie, near_ties_text

    notes = [NearTie(**t) if isinstance(t, dict) else t for t in near_ties]
    return write_text(Path(figures_dir) / NEAR_TIES_FILE, near_ties_text(notes))


def figures_folder(notebook: str, changed: dict, figures_root: Path, run_dir: Path,
                   write_reference: bool = False) -> Path:
    """Where a notebook writes its figures and tables: ``figures_root/<notebook>/``, except that a run with
    ``changed`` parameters (the same test as ``reference_check``'s) writes into its run folder's
    ``figures/<notebook>/`` instead of the repository's reference, unless ``write_reference`` asks for it."""
    figures_root = Path(figures_root).resolve()
    if changed and not write_reference and figures_root == Path(REFERENCE_DIR).resolve():
        return Path(run_dir) / "figures" / notebook
    return figures_root / notebook


NOT_DEFAULT = "ran with parameters other than the reference's defaults"


def reference_check(entry: dict, figures_dir: Path, root: Path = ROOT) -> dict:
    """What the run's manifest records of the comparison: whether it was made (default parameters,
    written into the repository's ``figures/``), the changed tables with their moved rows, each
    explained by a near-tie of this run or of the reference run, or not."""
    figures_dir = Path(figures_dir).resolve()
    if entry.get("changed"):
        inside = figures_dir.parent == (Path(root) / "figures").resolve()
        return {"compared": False, "why": NOT_DEFAULT + ("; written into figures/ as asked" if inside else
                                                         f"; its figures and tables are in {figures_dir}")}
    if figures_dir.parent != (Path(root) / "figures").resolve():
        return {"compared": False, "why": "written outside the repository's figures/"}
    if entry.get("status") != "ok":
        return {"compared": False, "why": "the notebook failed"}
    dataset = (entry.get("parameters") or {}).get("dataset")
    changed = changed_tables(entry.get("files", []), figures_dir, root, dataset if isinstance(dataset, str) else None)
    if not changed:
        return {"compared": True, "changed": [], "near_ties": []}
    near = list(entry.get("near_ties", []))
    theirs = reference_near_ties(figures_dir, root)
    for table in changed:
        rows = explain(table["rows"], near + theirs)
        table["moved_rows"] = len(rows)
        table["unexplained_rows"] = sum(r["explained_by"] == NOT_EXPLAINED for r in rows)
        table["rows"] = rows[:ROWS_KEPT]
    return {"compared": True, "changed": changed, "near_ties": near, "reference_near_ties": len(theirs)}


def reference_lines(manifest: dict) -> list[str]:
    """What ``rag_lab run`` prints at its end: per compared notebook, the tables that moved (or that
    none did), each with its moved rows and what explains each; a note for notebooks not compared."""
    lines = []
    for nb in manifest.get("notebooks", []):
        check = nb.get("reference") or {}
        name = nb["notebook"]
        if not check.get("compared"):
            lines.append(f"reference: {name} not compared ({check.get('why', 'no record')})")
        elif not check["changed"]:
            lines.append(f"reference: {name}: every table matches figures/{name}/ as committed")
        else:
            lines.append(f"reference: {name}: {len(check['changed'])} table(s) differ from figures/{name}/ as "
                         "committed (refresh the reference on purpose, in a commit of its own):")
            unexplained = 0
            for table in check["changed"]:
                lines.extend(_table_lines(table))
                unexplained += table.get("unexplained_rows", 0) + (0 if table.get("rows") else 1)
            if unexplained:
                lines.append(f"  {unexplained} moved row(s) or table(s) {NOT_EXPLAINED}: look for it")
            else:
                lines.append("  every moved row has a near-tie of its own method, data set and question "
                             "(another CPU's last-bit rounding can flip it: docs/reproducibility.md)")
    return lines


def _table_lines(table: dict) -> list[str]:
    rows = table.get("rows") or []
    lines = [f"  {table['table']}: {table['why']}"]
    if not rows:
        return lines + [f"    the whole table: {NOT_EXPLAINED}"]
    moved, unexplained = table.get("moved_rows", len(rows)), table.get("unexplained_rows", 0)
    lines.append(f"    {moved} row(s) moved, {unexplained} {NOT_EXPLAINED}")
    shown = sorted(rows, key=lambda r: r.get("explained_by") != NOT_EXPLAINED)[:ROWS_SHOWN]   # unexplained first
    lines.extend(row_line(r) for r in shown if "explained_by" in r)
    if moved > len(shown):
        lines.append(f"    ... and {moved - len(shown)} more (manifest.json, reference)")
    return lines
