"""The verdict words: how a decided comparison's verdict is said, with its reason. One wording for every notebook, so "undecided" is never said five ways:
the words are ``statistics``' constants, and "cannot be decided" always carries the reason ``decide``
gave (a row without one — before ``decide`` gave reasons — says the word alone).

The paper folders say a verdict with these words too: ``side`` (above / below, ahead / behind, or the
undecided word), ``relation`` (the words before the other method's name) and ``standing`` (one
difference with its numbers and verdict); a ranking with ``leader`` (the best, its lead over the
runner-up and where the paper's best stands) and ``order_said`` (which places of an order are told
apart, against the paper's order); ``inside_counts`` how many paper-reported numbers our intervals hold.

Also the data set a tidy table came from (``evaluate`` records it in ``attrs``), for the ledger. The
finding sentences built from decided rows are ``findings``'.
"""
from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ..core.plots import IN_CI
from .statistics import (CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, decided, estimand_sentence, format_ci,
                         format_p, verdict)

WORDS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE)
HOW_DECIDED = ("How the verdicts below are decided: every difference is paired by question (clustered by document),\n"
               "with one test giving its p and its 95% interval (rag_lab.evaluation.statistics: the bounded-mean test "
               "with an unseen unit for scores in [0, 1], the paired t-test otherwise),\np adjusted by Holm within its "
               "table's declared family; a difference is called only when that p is below 0.05, otherwise the "
               "sentence gives the verdict word\n(inconclusive, or cannot be decided with its reason). Intervals are "
               "each comparison's own, unadjusted for the family.")


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
    if word == UNDECIDABLE:         # a design that cannot decide: its reason, no interval or p
        return f"n = {int(n)}: {verdict_said({**dict(row), 'verdict': word})}"
    return f"{stats}: {side(word, up, down) if decided(word) else verdict_said({**dict(row), 'verdict': word})}"


def dataset_of(results: pd.DataFrame, default: str = "") -> str:
    """The data set ``evaluate`` scored (``results.attrs["dataset"]``), else ``default``."""
    return str(getattr(results, "attrs", {}).get("dataset") or default)


def estimand_of(dataset) -> str:
    """The notebook's first statistical sentence (``statistics.estimand_sentence``) for ``dataset``: its
    questions with gold (the ones scored) and the documents they were written from (``question_units``)."""
    from .metrics import questions_with_gold
    from .uncertainty import question_units

    scored = questions_with_gold(dataset)[0]
    units = question_units(dataset)
    return f"{dataset.name}: " + estimand_sentence(len(scored), len({units[q.id] for q in scored}))


def pair(order: pd.DataFrame, a: str, b: str) -> dict | None:
    """``a`` minus ``b`` from a pairwise table (``uncertainty.pairwise_differences``: rows method, below),
    turned round when the table has ``b`` first; None when the table has neither order."""
    for first, second, sign in ((a, b, 1), (b, a, -1)):
        rows = order[(order["method"] == first) & (order["below"] == second)]
        if len(rows):
            r = rows.iloc[0]
            lo, hi = (r["ci_low"], r["ci_high"]) if sign == 1 else (-r["ci_high"], -r["ci_low"])
            turned = {SUPPORTED: CONTRADICTED, CONTRADICTED: SUPPORTED}
            given = r.get("verdict", "")
            return {"diff": sign * r["diff"], "ci_low": lo, "ci_high": hi, "n": r["n"], "p_holm": r.get("p_holm", math.nan),
                    "p": r.get("p", math.nan), "p_floor": r.get("p_floor", 0.0),
                    "verdict": turned.get(given, given) if sign == -1 else given, "reason": r.get("reason", "")}
    return None


def leader(label: str, ours: pd.Series, order: pd.DataFrame, metric: str, reported: pd.Series | None = None,
           reported_label: str = "paper-reported") -> str | None:
    """Our best method (``ours``: method -> mean), its paired difference from the runner-up (``order``: the
    pairwise table on the same metric) and where the paper's best method (``reported``) stands against it.
    None when ``ours`` is empty."""
    values = ours.dropna().sort_values(ascending=False, kind="stable")
    if values.empty:
        return None
    best, top = values.index[0], float(values.iloc[0])
    tied = [n for n in values.index if float(values[n]) == top]
    if len(values) == 1:
        text = f"{label}: only {best} has a {metric} ({top:.3f}), so there is no ranking"
    elif len(tied) > 1:
        text = f"{label}: the best {metric}, {top:.3f}, is shared by {', '.join(tied)} (a tie: no winner)"
    else:
        second = values.index[1]
        d = pair(order, best, second)
        text = f"{label}: the best {metric} is {best} ({top:.3f}), then {second} ({values.iloc[1]:.3f})"
        if d is not None:
            text += f"; {best} minus {second} is {standing(d, 'a clear lead', 'behind')}"
    rep = reported.dropna() if reported is not None else pd.Series(dtype=float)
    if not rep.empty:
        p_best = rep.idxmax()
        text += f"; {reported_label}: {p_best} best ({rep.max():.3f})"
        if p_best in tied:
            text += ", the same strategy as ours" if len(tied) == 1 else ", one of our best"
        elif len(values) > 1 and p_best == values.index[1] and len(tied) == 1:
            text += ", our runner-up (above)"
        elif p_best in values.index:
            d = pair(order, best, p_best)
            if d is not None:
                text += (f"; here {p_best} ({values[p_best]:.3f}) is behind our best by "
                         f"{standing(d, f'{p_best} is behind', f'{p_best} is ahead')}")
    return text + "."


def order_said(order: pd.DataFrame, label: str, metric: str, reported: pd.Series) -> str:
    """Our order on ``metric`` (``order``: the pairwise table, the better first) and which of its pairs the
    questions tell apart, set against the paper's order (``reported``: method -> its number): a pair the
    paper ranks the other way contradicts it only when our verdict on it is decided. "" for no pairs."""
    if order.empty:
        return ""
    ranked = list(dict.fromkeys(list(order["method"]) + list(order["below"])))
    told = order[order["verdict"].isin([SUPPORTED, CONTRADICTED])]
    flipped = order[[reported.get(a, math.nan) < reported.get(b, math.nan) for a, b in zip(order["method"], order["below"])]]
    flipped_told = flipped[flipped["verdict"] == SUPPORTED]
    ns = sorted({int(v) for v in order["n"]})
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]} to {ns[-1]}"
    few = int((order["verdict"] == UNDECIDABLE).sum())
    text = (f"{label}: our {metric} order is {' > '.join(ranked)} (n = {n} questions); "
            f"{len(told)} of its {len(order)} pairs are told apart (Holm-adjusted p < 0.05 across the pairs"
            + (f"; {few} {UNDECIDABLE}" if few else "")
            + (f"; MDE up to {order['mde'].max():.3f}" if order["mde"].notna().any() else "") + ").")
    if len(flipped):
        text += (f" The paper-reported order reverses {len(flipped)} of these pairs; "
                 + (f"{len(flipped_told)} of them are decided here ("
                    + ", ".join(f"{a} > {b} by {format_ci(d, lo, hi)}" for a, b, d, lo, hi in
                                zip(flipped_told["method"], flipped_told["below"], flipped_told["diff"],
                                    flipped_told["ci_low"], flipped_told["ci_high"]))
                    + ")" if len(flipped_told) else "none is decided here, so the two orders do not contradict each other")
                 + ".")
    return text


def inside_counts(side: pd.DataFrame) -> str:
    """``MRR 3/6, R@1 2/6``: per metric of a table beside the paper (``core.plots.with_paper`` with
    intervals), how many of the paper-reported numbers lie inside our 95% interval, of those it could be
    said for; "" when none could."""
    parts = []
    for metric in [m for m, part in side.columns if part == IN_CI]:
        said = side[(metric, IN_CI)][side[(metric, IN_CI)].isin(["yes", "no"])]
        if len(said):
            parts.append(f"{metric} {int((said == 'yes').sum())}/{len(said)}")
    return ", ".join(parts)
