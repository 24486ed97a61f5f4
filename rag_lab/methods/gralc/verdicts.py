"""How notebook 04 words one paired difference: its value, 95% interval, n and Holm p, and the verdict
its test gives (``statistics.verdict`` against 0, read from p) — or that the questions cannot decide it."""
from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ...evaluation.decisions import verdict_said
from ...evaluation.statistics import format_p
from ...evaluation.statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE, verdict

METHOD = ("How the verdicts below are decided: every difference is paired by question (clustered by document), "
          "with one test giving its p and its 95% interval (rag_lab.evaluation.statistics: Tango's test for 0/1 "
          "scores, the paired t-test otherwise), p adjusted by Holm within its table's declared family; a difference "
          "is called only when that p is below 0.05, otherwise the sentence gives the verdict word (inconclusive, or "
          "cannot be decided with its reason). Intervals are each comparison's own, unadjusted for the family. "
          "The paper reports no tests.")


def _signed(x: float) -> str:
    """``+0.012`` / ``-0.012``; a value that rounds to zero prints as ``+0.000``, never ``-0.000``."""
    v = round(x, 3)
    return f"{v if v != 0 else 0.0:+.3f}"


def call(row: Mapping, up: str, down: str) -> str:
    """``+0.057 [-0.026, +0.142], n = 59, Holm p = 1.00: <verdict>`` for one paired difference (``row``:
    diff, ci_low, ci_high, n, p and optionally p_holm); ``up``/``down`` name a difference decided above/below
    0 (``decided``), otherwise the n questions cannot decide it."""
    d, lo, hi, n = (float(row[c]) for c in ("diff", "ci_low", "ci_high", "n"))
    p = float(row.get("p_holm", math.nan))
    stats = (f"{_signed(d)} [{_signed(lo)}, {_signed(hi)}], n = {int(n)}" if not math.isnan(lo) else
             f"{_signed(d)}, n = {int(n)}")
    stats += "" if math.isnan(p) else f", Holm p = {format_p(p)}"
    if d == lo == hi == 0:
        return f"{stats}: the same on every question"
    v = decided(row)
    if v == SUPPORTED:
        return f"{stats}: {up}"
    if v == CONTRADICTED:
        return f"{stats}: {down}"
    return f"{stats}: {verdict_said({**dict(row), 'verdict': v})}"


def decided(row: Mapping) -> str:
    """The verdict of one paired difference: the one ``uncertainty.decide`` gave its family where the row
    carries it; else ``statistics.verdict`` against 0 from its Holm p (or its p); with no p at all there
    is no test, and an interval alone decides nothing: cannot be decided."""
    given = row.get("verdict")
    if isinstance(given, str) and given:
        return given
    p = float(row.get("p_holm", math.nan))
    if math.isnan(p):
        p = float(row.get("p", math.nan))
    if math.isnan(p):
        return UNDECIDABLE
    floor = row.get("p_floor", 0.0)
    floor = 0.0 if floor is None or (isinstance(floor, float) and math.isnan(floor)) else float(floor)
    return verdict(float(row["diff"]), p, 0.0, floor)


def pair(order: pd.DataFrame, a: str, b: str) -> dict | None:
    """``a`` minus ``b`` from a pairwise table (``comparisons.order``: rows method, below), turned round
    when the table has ``b`` first; None when the table has neither order."""
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
