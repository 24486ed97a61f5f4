"""How the call sites say a decided comparison: the verdict word with its reason, and the family its
Holm p was adjusted in. One wording for every notebook, so "undecided" is never said five ways:
the words are ``statistics``' constants, and "cannot be decided" always carries the reason ``decide``
gave (a row without one — before ``decide`` gave reasons — says the word alone).

The paper folders say a verdict with these words too: ``side`` (above / below, ahead / behind, or the
undecided word), ``relation`` (the words before the other method's name) and ``standing`` (one
difference with its numbers and verdict).

Also the data set a tidy table came from (``evaluate`` records it in ``attrs``), for the ledger.
"""
from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from .statistics import (CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, decided, estimand_sentence, format_p,
                         verdict)

WORDS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)


def reason_of(row: Mapping) -> str:
    """The reason a row "cannot be decided" ("" for a decided or inconclusive one)."""
    reason = row.get("reason", "") if hasattr(row, "get") else ""
    return "" if reason is None or (isinstance(reason, float) and pd.isna(reason)) else str(reason)


def verdict_said(row: Mapping) -> str:
    """The verdict word, and for "cannot be decided" its reason in brackets."""
    word = str(row["verdict"])
    reason = reason_of(row)
    return f"{word} ({reason})" if word == UNDECIDABLE and reason else word


def side(word: str, up: str = "ahead", down: str = "behind") -> str:
    """Where a verdict puts the first method: ``up`` when supported, ``down`` when contradicted, else the
    undecided word itself (inconclusive, cannot be decided)."""
    if word not in WORDS:
        raise ValueError(f"verdict must be one of {WORDS}, got {word!r}")
    return {SUPPORTED: up, CONTRADICTED: down}.get(word, word)


def relation(word: str) -> str:
    """The verdict as the words before the other method's name: ``ahead of``, ``behind``, ``inconclusive
    against``, ``cannot be decided against``."""
    return side(word, "ahead of", "behind") if decided(word) else f"{side(word)} against"


def copula(word: str) -> str:
    """The verb before a verdict word in a sentence: ``is `` (``is inconclusive``, ``is ahead of``), and
    nothing before ``cannot be decided`` (never "is cannot be decided")."""
    return "" if word == UNDECIDABLE else "is "


def row_verdict(row: Mapping) -> str:
    """The verdict of one paired difference: the one ``uncertainty.decide`` gave where the row carries it;
    else ``statistics.verdict`` against 0 from its Holm p (or its p); with no p there is no test and an
    interval alone decides nothing: cannot be decided."""
    given = row.get("verdict")
    if isinstance(given, str) and given:
        return given
    p = float(row.get("p_holm", math.nan))
    p = float(row.get("p", math.nan)) if math.isnan(p) else p
    if math.isnan(p):
        return UNDECIDABLE
    floor = row.get("p_floor", 0.0)
    floor = 0.0 if floor is None or (isinstance(floor, float) and math.isnan(floor)) else float(floor)
    return verdict(float(row["diff"]), p, 0.0, floor)


def _signed(x: float) -> str:
    """``+0.012`` / ``-0.012``; a value that rounds to zero prints as ``+0.000``, never ``-0.000``."""
    v = round(x, 3)
    return f"{v if v != 0 else 0.0:+.3f}"


def standing(row: Mapping, up: str, down: str) -> str:
    """``+0.057 [-0.026, +0.142], n = 59, Holm p = 1.00: <side>`` for one paired difference (diff, ci_low,
    ci_high, n, p and optionally p_holm, verdict, reason): ``up``/``down`` for a difference decided above/below
    0 (``row_verdict``), else the verdict word with its reason."""
    d, lo, hi, n = (float(row[c]) for c in ("diff", "ci_low", "ci_high", "n"))
    p = float(row.get("p_holm", math.nan))
    stats = f"{_signed(d)} [{_signed(lo)}, {_signed(hi)}], n = {int(n)}" if not math.isnan(lo) else f"{_signed(d)}, n = {int(n)}"
    stats += "" if math.isnan(p) else f", Holm p = {format_p(p)}"
    if d == lo == hi == 0:
        return f"{stats}: the same on every question"
    word = row_verdict(row)
    return f"{stats}: {side(word, up, down) if decided(word) else verdict_said({**dict(row), 'verdict': word})}"


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
    from .statistics import format_ci
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
