"""How the call sites say a decided comparison: the verdict word with its reason, and the family its
Holm p was adjusted in. One wording for every notebook, so "undecided" is never said five ways:
the words are ``statistics``' constants, and "cannot be decided" always carries the reason ``decide``
gave (a row without one — before ``decide`` gave reasons — says the word alone).

Also the data set a tidy table came from (``evaluate`` records it in ``attrs``), for the ledger.
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from .statistics import UNDECIDABLE, estimand_sentence


def reason_of(row: Mapping) -> str:
    """The reason a row "cannot be decided" ("" for a decided or inconclusive one)."""
    reason = row.get("reason", "") if hasattr(row, "get") else ""
    return "" if reason is None or (isinstance(reason, float) and pd.isna(reason)) else str(reason)


def verdict_said(row: Mapping) -> str:
    """The verdict word, and for "cannot be decided" its reason in brackets."""
    word = str(row["verdict"])
    reason = reason_of(row)
    return f"{word} ({reason})" if word == UNDECIDABLE and reason else word


def family_said(table: pd.DataFrame) -> str:
    """``Holm within "<family>" (N comparisons); each interval is the comparison's own, unadjusted for the
    family`` for a decided table of one or more families; "" for an empty one."""
    if table.empty or "family" not in table.columns:
        return ""
    parts = [f'"{f}" ({int(g["family_size"].iloc[0])} comparisons)' for f, g in table.groupby("family", sort=False)]
    return (f"p Holm-adjusted within the declared famil{'y' if len(parts) == 1 else 'ies'} {'; '.join(parts)}; each "
            "interval is the comparison's own 95% interval, unadjusted for its family, so an interval that excludes 0 "
            "can stand beside a verdict that is not decided")


def dataset_of(results: pd.DataFrame, default: str = "") -> str:
    """The data set ``evaluate`` scored (``results.attrs["dataset"]``), else ``default``."""
    return str(getattr(results, "attrs", {}).get("dataset") or default)


def difference_said(row: Mapping) -> str:
    """``semantic - naive on ctx_recall@5: -0.242 [-0.442, -0.042] (n = 20, 3 documents, design effect 1.40,
    p = 0.02 (exact), MDE 0.150, p Holm = 0.04): contradicted`` for one row of a decided table."""
    from .statistics import format_ci, format_p
    from .uncertainty import comparison_note

    holm = "" if pd.isna(row["p_holm"]) or row["p_holm"] == row["p"] else f", p Holm = {format_p(row['p_holm'])}"
    return (f"{row['method']} - {row['baseline']} on {row['metric']}: "
            f"{format_ci(row['diff'], row['ci_low'], row['ci_high'])} ({comparison_note(row)}{holm}): {verdict_said(row)}")


def estimand_of(dataset) -> str:
    """The notebook's first statistical sentence (``statistics.estimand_sentence``) for ``dataset``: its
    questions with gold (the ones scored) and the documents they were written from (``question_units``)."""
    from .metrics import questions_with_gold
    from .uncertainty import question_units

    scored = questions_with_gold(dataset)[0]
    units = question_units(dataset)
    return f"{dataset.name}: " + estimand_sentence(len(scored), len({units[q.id] for q in scored}))
