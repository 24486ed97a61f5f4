"""Finding sentences: decided comparisons in words, one builder for every notebook (``finding_sentences``),
so every notebook says a decided, an inconclusive and an undecidable comparison the same way. It reads a
run's ledger rows or a decided table before it is recorded; the verdict words and their reasons are
``decisions``', this module only puts them into sentences.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import pandas as pd

from ..core.plots import IN_CI
from .decisions import reason_of, side, verdict_said
from .ledger import BASELINE_COLUMNS, split_metric
from .metric_specs import rank_metric
from .statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE, decided, format_ci, format_p
from .uncertainty import comparison_note


def _other(row: Mapping) -> str:
    """The other side of a comparison: its ``baseline`` (``below``, ``rival``), "" when the row has none."""
    return next((str(row[c]) for c in BASELINE_COLUMNS if c in row and pd.notna(row[c])), "")


def metric_of(row: Mapping) -> str:
    """The metric as a decided table names it: ``ctx_recall@5``; a ledger row's metric and setting joined back
    (``k=5`` -> ``@5``, ``136 tokens`` -> ``@136tok``; another setting, or a test's threshold, in brackets)."""
    metric = str(row["metric"])
    setting = str(row.get("setting", "") or "")
    threshold = row.get("threshold", 0.0)
    if "@" in metric or setting in ("", "nan"):
        moved = pd.notna(threshold) and float(threshold) != 0      # a decided table's test against a margin
        return f"{metric} (threshold {float(threshold):+g})" if moved else metric
    at, _, rest = setting.partition("; ")
    if at.startswith("k="):
        metric, setting = f"{metric}@{at[2:]}", rest
    elif at.endswith(" tokens") and at.split()[0].isdigit():
        metric, setting = f"{metric}@{at.split()[0]}tok", rest
    return f"{metric} ({setting})" if setting else metric


def name_of(row: Mapping) -> str:
    """``semantic - naive on ctx_recall@5``: the row's method minus the other side, on its metric."""
    other = _other(row)
    return f"{row['method']}{f' - {other}' if other else ''} on {metric_of(row)}"


def _said(row: Mapping, name: Callable[[Mapping], str]) -> str:
    holm = "" if pd.isna(row["p_holm"]) or row["p_holm"] == row["p"] else f", p Holm = {format_p(row['p_holm'])}"
    return (f"{name(row)}: {format_ci(row['diff'], row['ci_low'], row['ci_high'])} ({comparison_note(row)}{holm}): "
            f"{verdict_said(row)}")


def undecided_line(rows: pd.DataFrame, what: str = "comparison") -> str:
    """The rows that cannot be decided, said once in one line: how many, the reason(s), the pairs and metrics
    they concern, with no interval, MDE, p or verdict row. "" when every row is decided or inconclusive."""
    mine = rows[rows["verdict"].astype(str) == UNDECIDABLE] if len(rows) else rows
    if mine.empty:
        return ""
    n = len(mine)
    reasons = sorted({reason_of(r) or "no test" for _, r in mine.iterrows()})
    pairs = sorted({f"{r['method']} - {_other(r)}" for _, r in mine.iterrows() if "method" in r and _other(r)})
    metrics = sorted({metric_of(r) for _, r in mine.iterrows()}) if "metric" in mine.columns else []
    about = "; ".join(part for part in (", ".join(pairs[:6]) + (", …" if len(pairs) > 6 else ""),
                                        ", ".join(metrics[:6]) + (", …" if len(metrics) > 6 else "")) if part)
    return (f"{n} {what}{'s' * (n != 1)} {UNDECIDABLE} ({'; '.join(reasons)})" + (f": {about}" if about else "")
            + f"; no interval, MDE or verdict is shown for {'it' if n == 1 else 'them'}.")


def family_said(table: pd.DataFrame) -> str:
    """``p Holm-adjusted within the declared family "<family>" (N comparisons); each interval is the comparison's
    own ...`` for a decided table of one or more families; "" for an empty one."""
    if table.empty or "family" not in table.columns:
        return ""
    sizes = {f: int(g["family_size"].iloc[0]) for f, g in table.groupby("family", sort=False)}
    parts = [f'"{f}" ({n} comparison{"s" * (n != 1)})' for f, n in sizes.items()]
    return (f"p Holm-adjusted within the declared famil{'y' if len(parts) == 1 else 'ies'} {'; '.join(parts)}; each "
            "interval is the comparison's own 95% interval, unadjusted for its family, so an interval that excludes 0 "
            "can stand beside a verdict that is not decided")


def _kind(setting) -> str:
    """A setting's kind, the words before its colon: "smallest equal budget: 136 tokens (...)" -> "smallest equal budget"."""
    return str(setting).split(":")[0]


def _at(setting: str) -> str:
    """A setting as the words after a number: "at k=5, unequal budgets", "at the smallest equal budget: 40 tokens"."""
    label = setting.split(" (")[0]
    return label if label.startswith("at ") else "at the " + label


def power_said(rows: pd.DataFrame, dataset: str) -> list[str]:
    """What one data set can tell apart, said once: the questions and documents (the resampling unit) the rows
    rest on and the median minimum detectable effect of the ranking metric's differences (context recall, else
    document recall) in each setting; then how many comparisons of each setting cannot be decided at this n."""
    metric = rank_metric(rows["metric"])
    mine = rows[rows["metric"].str.split("@").str[0] == metric]
    if mine.empty:
        return [f"{dataset}: no {metric} differences in this run."]
    units = mine["units"].dropna() if "units" in mine else pd.Series(dtype=float)
    u = int(units.max()) if len(units) else 0
    unit_words = (f"from {u} document{'' if u == 1 else 's'} (each difference resampled by document)" if u
                  else "(each its own resampling unit)")
    per_setting = mine.groupby("setting", sort=False)["mde"].median()
    said = "; ".join(f"{'none' if pd.isna(mde) else f'{mde:.3f}'} {_at(s)}" for s, mde in per_setting.items())
    cannot = rows["verdict"].astype(str).str.startswith(UNDECIDABLE)
    undecided = "; ".join(f"{int(cannot[g.index].sum())} of {len(g)} comparison{'s' * (len(g) != 1)} "
                          f"{_at(s).replace(': ', ' of ')} {UNDECIDABLE}"
                          for s, g in rows.groupby("setting", sort=False))   # one family a setting
    return [f"{dataset}: {int(mine['n'].max())} questions {unit_words}; the median minimum detectable effect (80% power) "
            f"of {metric} differences is {said}.", f"At this n: {undecided}."]


def moved_said(rows: pd.DataFrame) -> list[str]:
    """Which verdicts move between the setting at a cut-off k (unequal budgets) and those at a token budget: how
    many decided at k keep their verdict at every budget, each that does not (its verdict in every setting), and
    those decided at a budget but not at k. A setting's cut is read from its metric names (``@5``, ``@136tok``)."""
    d = rows.assign(kind=[_kind(s) for s in rows["setting"]], base=rows["metric"].str.split("@").str[0])
    cuts = {kind: split_metric(metric)[1] for kind, metric in zip(d["kind"], d["metric"])}
    kinds = list(dict.fromkeys(d["kind"]))
    at_k = next((c for c in kinds if cuts[c].startswith("k=")), None)
    budgets = [c for c in kinds if cuts[c].endswith(" tokens")]
    if at_k is None or not budgets:
        return ["No comparison was made both at k and at an equal budget."]
    k = cuts[at_k]
    wide = d.pivot_table(index=["method", "base"], columns="kind", values="verdict", aggfunc="first")
    decided = wide[at_k].isin([SUPPORTED, CONTRADICTED])
    kept = decided & wide[budgets].eq(wide[at_k], axis=0).all(axis=1)
    changed = wide[decided & ~kept]
    new = wide[~decided & wide[budgets].isin([SUPPORTED, CONTRADICTED]).any(axis=1)]

    def listed(table: pd.DataFrame) -> str:     # one comparison a line
        return "".join(f"\n  {m} {b} ({', '.join(f'{c}: {r[c]}' for c in [at_k, *budgets])})" for (m, b), r in table.iterrows())
    if decided.any():
        text = (f"Of the {int(decided.sum())} differences decided at {k} (unequal budgets), {int(kept.sum())} keep their "
                f"verdict at {'both equal budgets' if len(budgets) == 2 else 'the equal budget'}")
        text += f"; changed at an equal budget:{listed(changed)}" if len(changed) else "."
    else:
        text = f"No difference is decided at {k} (unequal budgets)."
    return [text] + ([f"Decided at an equal budget but not at {k}:{listed(new)}"] if len(new) else [])


def _signed(x: float) -> str:
    """``+0.012`` / ``-0.012``; a value that rounds to zero prints as ``+0.000``, never ``-0.000``."""
    v = round(x, 3)
    return f"{v if v != 0 else 0.0:+.3f}"


def _standing(row: Mapping, up: str, down: str) -> str:
    """``+0.057 [-0.026, +0.142], n = 59, Holm p = 1.00: <side>`` for one decided difference: ``up``/``down`` for
    one decided above/below 0, else its verdict word; one that cannot be decided gives its reason and no numbers."""
    d, lo, hi, n = (float(row[c]) for c in ("diff", "ci_low", "ci_high", "n"))
    p = float(row["p_holm"])
    stats = (f"{_signed(d)} [{_signed(lo)}, {_signed(hi)}], n = {int(n)}" if not math.isnan(lo)
             else f"{_signed(d)}, n = {int(n)}")
    stats += "" if math.isnan(p) else f", Holm p = {format_p(p)}"
    if d == lo == hi == 0:
        return f"{stats}: the same on every question"
    word = str(row["verdict"])
    if word == UNDECIDABLE:
        return f"n = {int(n)}: {verdict_said(row)}"
    return f"{stats}: {side(word, up, down) if decided(word) else verdict_said(row)}"


def _pair(order: pd.DataFrame, a: str, b: str) -> dict | None:
    """``a`` minus ``b`` from an order table, turned round (interval and verdict with it) when the table has ``b``
    first; None when it has neither."""
    for first, second, sign in ((a, b, 1), (b, a, -1)):
        rows = order[(order["method"] == first) & (order["below"] == second)]
        if len(rows):
            r = rows.iloc[0]
            lo, hi = (r["ci_low"], r["ci_high"]) if sign == 1 else (-r["ci_high"], -r["ci_low"])
            turned = {SUPPORTED: CONTRADICTED, CONTRADICTED: SUPPORTED} if sign == -1 else {}
            word = turned.get(r["verdict"], r["verdict"])
            return {"diff": sign * r["diff"], "ci_low": lo, "ci_high": hi, "n": r["n"], "p_holm": r["p_holm"],
                    "verdict": word, "reason": r.get("reason", "")}
    return None


def _leader_said(order: pd.DataFrame, label: str, ours: pd.Series, metric: str, reported: pd.Series,
                 reported_label: str) -> str:
    """Our best method (``ours``: method -> mean), its difference from the runner-up in ``order`` and where the
    paper's best method (``reported``) stands against it; "" when ``ours`` is empty."""
    values = ours.dropna().sort_values(ascending=False, kind="stable")
    if values.empty:
        return ""
    best, top = values.index[0], float(values.iloc[0])
    tied = [n for n in values.index if float(values[n]) == top]
    if len(values) == 1:
        text = f"{label}: only {best} has a {metric} ({top:.3f}), so there is no ranking"
    elif len(tied) > 1:
        text = f"{label}: the best {metric}, {top:.3f}, is shared by {', '.join(tied)} (a tie: no winner)"
    else:
        second = values.index[1]
        d = _pair(order, best, second)
        text = f"{label}: the best {metric} is {best} ({top:.3f}), then {second} ({values.iloc[1]:.3f})"
        if d is not None:
            text += f"; {best} minus {second} is {_standing(d, 'a clear lead', 'behind')}"
    rep = reported.dropna()
    if not rep.empty:
        p_best = rep.idxmax()
        text += f"; {reported_label}: {p_best} best ({rep.max():.3f})"
        if p_best in tied:
            text += ", the same strategy as ours" if len(tied) == 1 else ", one of our best"
        elif len(values) > 1 and p_best == values.index[1] and len(tied) == 1:
            text += ", our runner-up (above)"
        elif p_best in values.index:
            d = _pair(order, best, p_best)
            if d is not None:
                text += (f"; here {p_best} ({values[p_best]:.3f}) is behind our best by "
                         f"{_standing(d, f'{p_best} is behind', f'{p_best} is ahead')}")
    return text + "."


def _order_said(order: pd.DataFrame, label: str, metric: str, reported: pd.Series) -> str:
    """Our order on ``metric`` and which of its pairs the questions tell apart, set against the paper's order
    (``reported``): a pair the paper ranks the other way contradicts it only when our verdict on it is decided.
    "" for no pairs."""
    if order.empty:
        return ""
    ranked = list(dict.fromkeys(list(order["method"]) + list(order["below"])))
    told = order[order["verdict"].isin([SUPPORTED, CONTRADICTED])]
    flipped = order[[reported.get(a, math.nan) < reported.get(b, math.nan)
                     for a, b in zip(order["method"], order["below"])]]
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
                    + ")" if len(flipped_told)
                    else "none is decided here, so the two orders do not contradict each other")
                 + ".")
    return text


def inside_said(beside: pd.DataFrame, label: str, what: str = "methods") -> str:
    """``<label>: the paper-reported number lies inside our 95% interval for MRR 3/6, R@1 2/6 <what>.``: per metric
    of a table beside the paper (``core.plots.with_paper`` with intervals), how many of the paper's numbers our
    interval holds, of those it could be said for; "" when none could. No test decides this, so it is no finding
    of decided rows (``finding_sentences``)."""
    parts = []
    for metric in [m for m, part in beside.columns if part == IN_CI]:
        said = beside[(metric, IN_CI)][beside[(metric, IN_CI)].isin(["yes", "no"])]
        if len(said):
            parts.append(f"{metric} {int((said == 'yes').sum())}/{len(said)}")
    return (f"{label}: the paper-reported number lies inside our 95% interval for {', '.join(parts)} {what}."
            if parts else "")


def finding_sentences(rows: pd.DataFrame, name: Callable[[Mapping], str] = name_of, what: str = "comparison",
                      family: bool = True, across_settings: bool = False, dataset: str | None = None, *,
                      ranking: str | None = None, metric: str = "", means: pd.Series | None = None,
                      reported: pd.Series | None = None, reported_label: str = "paper-reported") -> list[str]:
    """The findings of decided ``rows``, a sentence each: every row a test could decide or leave inconclusive
    (``semantic - naive on ctx_recall@5: -0.242 [-0.442, -0.042] (n = 20, 3 documents, design effect 1.40,
    p = 0.02, MDE 0.150, p Holm = 0.04): contradicted``; ``name`` says what was compared); then those that
    cannot be decided, said once (``undecided_line``, ``what`` counted); then, with ``family``, the family
    their Holm p was adjusted in (``family_said``), when a row was tested. [] for no rows.

    ``across_settings``: the rows of one data set (``dataset``, else their ``dataset`` column) decided in
    several settings (a ``setting`` column "<kind>: <details>", one family a setting; notebook 10's equal budgets
    and k) are said across them instead of a row each: what each setting can tell apart (``power_said``), then
    the verdicts that move between k and the budgets (``moved_said``).

    ``ranking`` (a label: ``Table 4 (full condition)``): the rows are an order table on ``metric``
    (``uncertainty.pairwise_differences``: every pair of methods, the better first) and one sentence says it
    against the paper's numbers (``reported``: method -> number, named ``reported_label``): with ``means`` (method
    -> our mean) its leader, the best, its difference from the runner-up and where the paper's best stands
    against it (a leader is said even with no pairs: "only X has a MRR"); without, its order and how many of its
    pairs are told apart, and whether a pair the paper ranks the other way is decided here."""
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"finding_sentences takes decided rows as a DataFrame, got {type(rows).__name__}")
    missing = [c for c in ("verdict", "diff", "ci_low", "ci_high", "n", "p", "p_holm") if c not in rows.columns]
    if missing and not rows.empty:
        raise ValueError(f"finding_sentences needs decided rows (ledger or uncertainty.decide columns); these lack {missing}")
    if ranking is not None:
        reported = pd.Series(dtype=float) if reported is None else reported
        said = (_leader_said(rows, ranking, means, metric, reported, reported_label) if means is not None
                else _order_said(rows, ranking, metric, reported))
        return [said] if said else []
    if rows.empty:
        return []
    if across_settings:
        dataset = dataset if dataset is not None else str(rows["dataset"].iloc[0])
        return power_said(rows, dataset) + moved_said(rows)
    tested = rows[rows["verdict"].astype(str) != UNDECIDABLE]
    out = [_said(r, name) for _, r in tested.iterrows()]
    out += [line for line in [undecided_line(rows, what)] if line]
    if family and len(tested) and "family" in rows.columns:
        out.append(family_said(rows) + ".")
    return out
