"""The paired comparisons behind the GraLC-RAG notebook's verdicts, from the tidy per-question tables.

Every verdict the notebook prints reads one of these tables: differences paired by
question (clustered by document when the table is given ``where``: its data set's question units), each
with its 95% interval and p, and one declared family per table decided by ``uncertainty.decide`` (Holm
within it), never a threshold of our own; with ``where`` each table is recorded in the run's ledger
under the registry's strategy names and its length condition. Rows carry
the paper's strategy labels. The structure-aware vs content-only contrast compares, question by
question, the mean of the three structure-aware strategies with the mean of the three content-only
ones, so each question counts once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ...core.types import Dataset
from ...evaluation.ledger import record
from ...evaluation.statistics import paired_difference
from ...evaluation.uncertainty import TEST_COLUMNS, Units, decide, pairwise_differences, paired_differences, per_question
from ...evaluation.uncertainty import question_units
from . import paper
from .experiment import Sweep, sweep_columns, sweep_label
from .tables import ALL, SOURCE_SECCOV
from .seccov import CONTENT_ONLY, PAPER_SECCOV, STRUCTURE_AWARE

# the two SecCov readings Table 5 shows: the one whose pattern matches the paper's, and the fair one
READINGS = {"pattern: any-level, content-only unlabelled": PAPER_SECCOV,   # short: table index labels print whole
            "fair: source article's sections": SOURCE_SECCOV}
DIFF_COLUMNS = ["diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde"]
GROUPS = ("structure-aware", "content-only")     # the contrast's two sides, as the ledger names them


@dataclass(frozen=True)
class Where:
    """The data set and length condition a table's comparisons are made on: its question units cluster
    the tests by document, and its name and condition file them in the ledger."""
    dataset: str
    condition: str
    units: Units | None = field(default=None, compare=False)


def where(data: Dataset, condition: str) -> Where:
    """``Where`` for ``data`` (its ``question_units``) under ``condition`` (e.g. "full", "abstract")."""
    return Where(data.name, condition, question_units(data))


def _units(at: Where | None) -> Units | None:
    return at.units if at is not None else None


def _record(table: pd.DataFrame, at: Where | None, other: str = "baseline") -> None:
    """File ``table`` (registry names, before relabelling) in the ledger under ``at``'s data set and
    condition; nothing without ``at``."""
    if at is not None and len(table):
        record(table.assign(condition=at.condition), at.dataset)


def _present(scores: pd.DataFrame, methods: Sequence[str]) -> list[str]:
    have = set(scores["method"])
    return [m for m in methods if m in have]


def order(scores: pd.DataFrame, column: str, methods: Sequence[str] = ALL, where: Where | None = None) -> pd.DataFrame:
    """Every pair of strategies on one metric@k (``column``), the better first, paired by question,
    Holm across the pairs (``uncertainty.pairwise_differences``), with the paper's labels."""
    out = pairwise_differences(scores, column, _present(scores, methods), units=_units(where))
    _record(out, where, "below")
    return out.assign(method=out["method"].map(paper.label), below=out["below"].map(paper.label))


def against(scores: pd.DataFrame, column: str, base: str, methods: Sequence[str],
            where: Where | None = None) -> pd.DataFrame:
    """Each of ``methods`` minus ``base`` on ``column``, paired by question, Holm across the rows,
    with the paper's labels (``uncertainty.paired_differences``)."""
    present = _present(scores, methods)
    if base not in set(scores["method"]) or not present:
        return pd.DataFrame(columns=["method", "baseline", "metric", *DIFF_COLUMNS])
    out = paired_differences(scores, base, present, [column], units=_units(where),
                             family=f"each strategy minus {base} on {column}")
    _record(out, where)
    return out.assign(method=out["method"].map(paper.label), baseline=out["baseline"].map(paper.label))


def ablation(scores: pd.DataFrame, column: str, where: Where | None = None) -> pd.DataFrame:
    """Table 2's ΔMRR with intervals: each added component minus the late-chunking base, paired by
    question; rows named by the ablation steps (``paper.ABLATION``)."""
    base, *steps = paper.ABLATION_STRATEGIES
    out = against(scores, column, base, steps, where)
    names = dict(zip(map(paper.label, paper.ABLATION_STRATEGIES), paper.ABLATION))
    return out.assign(step=out["method"].map(names)).set_index("step")[[*DIFF_COLUMNS, *_tail(out)]]


def _tail(table: pd.DataFrame) -> list[str]:
    """The test's columns a table carries besides ``DIFF_COLUMNS`` (family, verdict, reason, …), in order."""
    return [c for c in dict.fromkeys((*TEST_COLUMNS, "reason")) if c in table.columns and c not in DIFF_COLUMNS]


def _group_rows(scores: pd.DataFrame, column: str, first: Sequence[str], second: Sequence[str],
                units: Units | None) -> dict:
    """Per question, the mean of the ``first`` strategies minus the mean of the ``second`` on ``column``:
    both groups' means and the paired difference's columns (``statistics.paired_difference``)."""
    table = per_question(scores, column)
    a = [m for m in first if m in table.columns]
    b = [m for m in second if m in table.columns]
    if not a or not b:
        return {}
    fa, fb = table[a].mean(axis=1, skipna=False).to_numpy(), table[b].mean(axis=1, skipna=False).to_numpy()
    labels = [units.get(str(q), f"question:{q}") for q in table.index] if units is not None else None
    d = paired_difference(fa, fb, units=labels)
    return {"first": float(np.nanmean(fa)), "second": float(np.nanmean(fb)), **d.as_dict()}


def group_difference(scores: pd.DataFrame, column: str, first: Sequence[str] = STRUCTURE_AWARE,
                     second: Sequence[str] = CONTENT_ONLY, where: Where | None = None) -> dict:
    """Per question, the mean of the ``first`` strategies minus the mean of the ``second`` on
    ``column``: the paired difference, decided as a declared family of one (``uncertainty.decide``), and
    both groups' means."""
    row = _group_rows(scores, column, first, second, _units(where))
    if not row:
        return {"first": np.nan, "second": np.nan, **dict.fromkeys(DIFF_COLUMNS, np.nan)}
    decided = decide(pd.DataFrame([{"method": GROUPS[0], "baseline": GROUPS[1], "metric": column, **row}]),
                     f"structure-aware minus content-only on {column}")
    _record(decided, where)
    return decided.iloc[0].to_dict()


def seccov_contrast(grad: pd.DataFrame, ks: Sequence[int], conditions: Sequence[str],
                    where: Where | None = None) -> pd.DataFrame:
    """Structure-aware minus content-only SecCov@k in both readings (``READINGS``), per condition and
    k, paired by question; the table's rows one declared family (Holm across them, ``uncertainty.decide``),
    with the test's columns; beside the paper's difference of the same group means (its printed SecCov,
    which only the pattern reading reproduces). ``where``: units and the ledger (its condition is each
    row's)."""
    reported = paper.table5()
    labels = lambda names: [paper.label(n) for n in names]     # noqa: E731 - the paper's rows
    rows = []
    for reading, metric in READINGS.items():
        for k in ks:
            for cond in conditions:
                d = grad[grad["condition"] == cond]
                if d.empty:
                    continue
                row = _group_rows(d, f"{metric}@{k}", STRUCTURE_AWARE, CONTENT_ONLY, _units(where))
                if not row:
                    continue
                col = f"{paper.seccov_label(k)} {cond}"
                paper_diff = (reported.loc[labels(STRUCTURE_AWARE), col].mean() - reported.loc[labels(CONTENT_ONLY), col].mean()
                              if metric == PAPER_SECCOV and col in reported.columns else np.nan)
                rows.append({"reading": reading, "k": k, "condition": cond, "structure-aware": row.pop("first"),
                             "content-only": row.pop("second"), "method": GROUPS[0], "baseline": GROUPS[1],
                             "metric": f"{metric}@{k}", **row, "paper-reported diff": paper_diff})
    head = ["reading", "k", "condition", "structure-aware", "content-only"]
    if not rows:
        return pd.DataFrame(columns=[*head, *DIFF_COLUMNS, "paper-reported diff"]).set_index(["reading", "k", "condition"])
    out = decide(pd.DataFrame(rows), "structure-aware minus content-only SecCov, both readings, every k and condition")
    if where is not None:
        record(out, where.dataset)          # each row's own condition
    tail = [c for c in _tail(out) if c != "condition"]
    return out[[*head, *DIFF_COLUMNS, "paper-reported diff", *tail]].set_index(["reading", "k", "condition"])


def sweep_differences(sweep: Sweep, where: Where | None = None) -> pd.DataFrame:
    """The λ ablation's retrieval columns at each λ minus the first λ, paired by question; one declared
    family per column (Holm across the λ values of that column, named in the ``family`` column), with the
    test's columns; rows (column label, λ)."""
    lams = list(sweep.table.index)
    columns = {v: k for k, v in sweep_columns(sweep).items()}
    if len(lams) < 2 or not columns:
        return pd.DataFrame(columns=DIFF_COLUMNS, index=pd.MultiIndex.from_tuples([], names=["column", "lambda"]))
    first, rest = sweep_label(lams[0]), [sweep_label(x) for x in lams[1:]]
    frames = [paired_differences(sweep.scores, first, rest, [metric], units=_units(where),
                                 family=f"each λ minus λ = {lams[0]:g} on {metric}") for metric in columns]
    out = pd.concat(frames, ignore_index=True)
    _record(out, where)
    label_to_lam = {sweep_label(x): x for x in lams}
    out = out.assign(column=out["metric"].map(columns), **{"lambda": out["method"].map(label_to_lam)})
    return out.set_index(["column", "lambda"])[[*DIFF_COLUMNS, *_tail(out)]]


def ceiling_test(scores: pd.DataFrame, column: str, methods: Sequence[str] = ALL, ceiling: float = paper.CEILING,
                 where: Where | None = None) -> dict | None:
    """Whether the strategy with the lowest mean ``column`` lies above ``ceiling``: its per-question
    scores minus the constant ``ceiling``, paired by question (clustered with ``where``) — the package's
    one-sample test, decided as a declared family of one. The row (``label``: the paper's name), or None
    when no strategy scored."""
    table = per_question(scores, column)
    present = [m for m in _present(scores, methods) if m in table.columns and table[m].notna().any()]
    if not present:
        return None
    lowest = min(present, key=lambda m: np.nanmean(table[m].to_numpy(dtype=float)))
    values = table[lowest].to_numpy(dtype=float)
    units = _units(where)
    labels = [units.get(str(q), f"question:{q}") for q in table.index] if units is not None else None
    d = paired_difference(values, np.full(len(values), ceiling), units=labels)
    decided = decide(pd.DataFrame([{"method": lowest, "baseline": f"the {ceiling:g} ceiling", "metric": column, **d.as_dict()}]),
                     f"the lowest {column} minus {ceiling:g}")
    _record(decided, where)
    return {**decided.iloc[0].to_dict(), "label": paper.label(lowest), "mean": float(np.nanmean(values))}
