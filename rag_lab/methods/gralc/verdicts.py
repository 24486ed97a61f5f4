"""How notebook 04 words one paired difference: its value, 95% interval, n and Holm p, and the verdict
its test gives (``statistics.verdict`` against 0, read from p) — or that the questions cannot decide it."""
from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ...evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, verdict

METHOD = ("How the verdicts below are decided: every difference is paired by question, with one test giving "
          "its p and its 95% interval (rag_lab.evaluation.statistics: Tango's test for 0/1 scores, the paired "
          "t-test otherwise), p adjusted by Holm across its table; a difference is called only when that p is "
          "below 0.05, otherwise the sentence says the questions cannot decide it. The paper reports no tests.")


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
    stats += "" if math.isnan(p) else ", Holm p < 0.01" if p < 0.005 else f", Holm p = {p:.2f}"
    if d == lo == hi == 0:
        return f"{stats}: the same on every question"
    v = decided(row)
    if v == SUPPORTED:
        return f"{stats}: {up}"
    if v == CONTRADICTED:
        return f"{stats}: {down}"
    return f"{stats}: the {int(n)} questions cannot decide it"


def decided(row: Mapping) -> str:
    """The verdict of one paired difference (``statistics.verdict`` against 0): from its Holm p where the
    row has one, else its p; supported, contradicted, inconclusive or cannot be decided at this n."""
    p = float(row.get("p_holm", math.nan))
    if math.isnan(p):
        p = float(row.get("p", math.nan))
    if math.isnan(p):
        # no test beside it (e.g. a mean's interval against the paper's 0.95 ceiling): that interval is
        # its own test at the 5% level
        lo, hi = float(row["ci_low"]), float(row["ci_high"])
        return SUPPORTED if lo > 0 else CONTRADICTED if hi < 0 else INCONCLUSIVE
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
            return {"diff": sign * r["diff"], "ci_low": lo, "ci_high": hi, "n": r["n"], "p_holm": r.get("p_holm", math.nan),
                    "p": r.get("p", math.nan), "p_floor": r.get("p_floor", 0.0)}
    return None
