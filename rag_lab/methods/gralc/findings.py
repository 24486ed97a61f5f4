"""The sentences the GraLC-RAG notebook prints about its results, built from that run's tables.

Each sentence gives our numbers, compares them with a threshold stated in the sentence (the
verdict word comes from that comparison) and, where the paper has the same quantity, quotes the
paper-reported number labelled as such. A sentence whose premise does not hold in the run (a
condition that did not run, an empty table, a one-value sweep) is left out or says what is
missing. The thresholds are ours, not the paper's (it reports no significance tests): a mean over
n questions moves by 1/n when one question's recall flips, so a difference in MRR, Recall or F1
counts as measurable from the larger of 0.01 and two questions' worth (2/n).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from ...core.plots import IN_CI
from ...evaluation.statistics import format_ci
from . import paper
from .experiment import ALL_COSINE, MENTION_COSINE, table2

RANK_TIE = 0.01      # MRR, Recall, F1: a smaller difference is no measurable one (``rank_tie`` raises it for small n)
SECTION_TIE = 0.5    # section counts (SecCov, section diversity): less than half a section
COSINE_TIE = 0.01    # infusion: 1 − cos(h′, h) below this leaves a token vector pointing where it did
CEILING = 0.95       # §4.1 of the paper calls MRR above 0.95 on its abstracts a near-ceiling effect
LONG_CONDITIONS = ("full", "partial", "introduction")   # longest first: the longest run speaks for Tables 4-5
CONTENT_ONLY = ["Naive", "Semantic", "Late Chunking"]
STRUCTURE_AWARE = ["Structure-Aware", "GraLC-RAG (KG)", "GraLC-RAG (+Graph)"]


def rank_tie(questions: int | None) -> float:
    """The threshold for MRR, Recall and F1 differences over ``questions`` questions: max(0.01, 2/n)."""
    return max(RANK_TIE, 2 / questions) if questions else RANK_TIE


def thresholds(questions: Mapping[str, int], answered: int | None = None) -> str:
    """The sentence that states the thresholds every verdict below uses (``questions``: the number of
    questions per condition; ``answered``: how many were answered for Table 6)."""
    groups: dict[int, list[str]] = {}
    for c, n in questions.items():
        groups.setdefault(n, []).append(c)
    if answered:
        groups.setdefault(answered, []).append("the answers")
    per = "; ".join(f"{rank_tie(n):.3f} for {n} questions ({', '.join(names)})" for n, names in groups.items())
    return (f"Thresholds of the verdicts below (ours; the paper reports no tests): MRR, Recall and F1 differ "
            f"measurably from max({RANK_TIE:g}, 2/n) — {per}; section counts from {SECTION_TIE:g} sections; a token "
            f"vector turns measurably when 1 − cos ≥ {COSINE_TIE:g}.")


def side(value: float, tie: float) -> str:
    """'≥ tie' or '< tie': which side of the threshold a (non-negative) size falls on."""
    return f"≥ {tie:.3g}" if value >= tie else f"< {tie:.3g}"


def group_mean(series: pd.Series, labels: Sequence[str]) -> float:
    """Mean of the rows of ``series`` named in ``labels`` (NaN when none is there)."""
    values = [series[n] for n in labels if n in series.index and not pd.isna(series[n])]
    return sum(values) / len(values) if values else math.nan


def leader(label: str, ours: pd.Series, metric: str, tie: float = RANK_TIE, reported: pd.Series | None = None,
           reported_label: str = "paper-reported") -> str | None:
    """Our best strategy, its lead over the runner-up against ``tie``, and where the paper's best
    strategy stands in our run. None when ``ours`` has no value."""
    values = ours.dropna().sort_values(ascending=False, kind="stable")
    if values.empty:
        return None
    best, top = values.index[0], float(values.iloc[0])
    tied = [n for n in values.index if float(values[n]) == top]
    if len(values) == 1:
        text = f"{label}: only {best} has a {metric} ({top:.3f}), so there is no ranking"
    elif len(tied) > 1:
        text = f"{label}: the best {metric}, {top:.3f}, is shared by {', '.join(tied)} (a tie: no clear winner)"
    else:
        second, gap = values.index[1], top - float(values.iloc[1])
        verdict = "a clear lead" if gap >= tie else "no clear winner"
        text = (f"{label}: the best {metric} is {best} ({top:.3f}), {gap:.3f} ahead of {second} "
                f"({values.iloc[1]:.3f}; {side(gap, tie)}: {verdict})")
    rep = reported.dropna() if reported is not None else pd.Series(dtype=float)
    if not rep.empty:
        p_best = rep.idxmax()
        text += f"; {reported_label}: {p_best} best ({rep.max():.3f})"
        if p_best in tied:
            text += ", the same strategy as ours" if len(tied) == 1 else ", one of our best"
        elif p_best in values.index:
            behind = top - float(values[p_best])
            text += (f"; here {p_best} is {behind:.3f} behind our best ({side(behind, tie)}: "
                     f"{'behind' if behind >= tie else 'level with it'})")
    return text + "."


def short_text(t1: pd.DataFrame, where: str, tie: float = RANK_TIE) -> list[str]:
    """Table 1: the leader and whether every strategy is near the ceiling the paper reports."""
    if t1.empty or "MRR" not in t1:
        return [f"Table 1 ({where}): no strategy ran, so nothing to compare."]
    reported = paper.table1()["MRR"]
    out = [leader(f"Table 1 ({where})", t1["MRR"], "MRR", tie, reported)]
    mrr = t1["MRR"].dropna()
    if mrr.empty:
        return [f"Table 1 ({where}): no strategy has an MRR, so nothing to compare."]
    low, who = float(mrr.min()), mrr.idxmin()
    if low > CEILING:
        out.append(f"Every strategy's MRR is above {CEILING:g} (lowest {low:.3f}, {who}): near the ceiling, as the "
                   f"paper reports on its abstracts (paper-reported lowest {reported.min():.3f}).")
    else:
        out.append(f"The lowest MRR is {low:.3f} ({who}), not above {CEILING:g}: not the near-ceiling setting the "
                   f"paper reports on its abstracts (paper-reported lowest {reported.min():.3f}).")
    return out


def ablation(t1: pd.DataFrame, where: str, tie: float = RANK_TIE) -> str | None:
    """Table 2: each component's ΔMRR against late chunking, sized against ``tie``."""
    t2, reported = table2(t1), paper.table2()
    parts, moved = [], 0
    for row in t2.index[1:]:
        d = float(t2.loc[row, "ΔMRR"])
        if math.isnan(d):
            continue
        moved += abs(d) >= tie
        verdict = "no measurable change" if abs(d) < tie else ("raises MRR" if d > 0 else "lowers MRR")
        rep = f"; paper-reported {reported.loc[row, 'ΔMRR']:+.4f}" if row in reported.index else ""
        parts.append(f"{row} {d:+.4f} (size {side(abs(d), tie)}: {verdict}{rep})")
    if not parts:
        return None
    return (f"Ablation ({where}, ΔMRR against the late-chunking base): " + "; ".join(parts)
            + f". {moved} of {len(parts)} components move MRR by {tie:.3g} or more.")


def longest_condition(conditions: Sequence[str]) -> str | None:
    return next((c for c in LONG_CONDITIONS if c in conditions), None)


def by_length(t4: pd.DataFrame, tie: float = RANK_TIE) -> str:
    """Table 4: the leader in the longest condition that ran (or why there is none)."""
    cond = longest_condition(list(t4.index.get_level_values(0))) if not t4.empty else None
    if cond is None:
        return ("Tables 4–5: no introduction, partial or full condition ran on this data, so there is no ranking "
                "by document length and no section coverage to report.")
    return leader(f"Table 4 ({cond} condition)", t4.loc[cond]["MRR"], "MRR", tie,
                  paper.table4().loc[cond]["MRR"])


def coverage(t5: pd.DataFrame, cond: str) -> list[str]:
    """Table 5: content-only against structure-aware SecCov in ``cond``, against SECTION_TIE."""
    reported, out = paper.table5(), []
    for col in [c for c in t5.columns if c.startswith("SecCov@") and c.endswith(f" {cond}")]:
        c, s = group_mean(t5[col], CONTENT_ONLY), group_mean(t5[col], STRUCTURE_AWARE)
        if math.isnan(c) or math.isnan(s):
            continue
        d = s - c
        verdict = ("no clear difference" if abs(d) < SECTION_TIE else
                   "structure-aware strategies cover more sections" if d > 0 else "content-only strategies cover more")
        text = (f"{col.rsplit(' ', 1)[0]}, {cond} condition: content-only strategies average {c:.2f} sections, "
                f"structure-aware ones {s:.2f} (Δ {d:+.2f}, size {side(abs(d), SECTION_TIE)} sections: {verdict})")
        if col in reported.columns:
            pc, ps = group_mean(reported[col], CONTENT_ONLY), group_mean(reported[col], STRUCTURE_AWARE)
            text += f"; paper-reported {pc:.2f} vs {ps:.2f} (Δ {ps - pc:+.2f})"
        out.append(text + ".")
    return out


def cross_section(t5: pd.DataFrame, cond: str) -> str | None:
    """Table 5: CS Recall in ``cond`` against the paper's 0 for every strategy, and in the shorter conditions."""
    cols = [c for c in t5.columns if c.startswith("CS Recall@")]
    main = next((c for c in cols if c.endswith(f" {cond}")), None)
    if main is None:
        return None
    v, name = t5[main].dropna(), main.rsplit(" ", 1)[0]
    if v.empty:
        return None
    if v.max() > 0:
        text = (f"{name}, {cond} condition: {v.min():.3f} to {v.max():.3f} (best {v.idxmax()}) — above 0, unlike the "
                "paper-reported 0.000 for every strategy")
    else:
        text = f"{name}, {cond} condition: 0.000 for every strategy, as paper-reported"
    shorter = [c for c in LONG_CONDITIONS[LONG_CONDITIONS.index(cond) + 1:] if f"{name} {c}" in t5.columns]
    if shorter:
        top = max(float(t5[f"{name} {c}"].max()) for c in shorter)
        where = " and ".join(shorter)
        text += (f"; in the {where} condition it is 0.000 for every strategy, as it must be: those texts end before "
                 "Results and Discussion, where each template's second section lies" if top == 0 else
                 f"; in the {where} condition it reaches {top:.3f} although those texts end before Results and "
                 "Discussion — check how sections were assigned roles")
    return text + "."


def answers(t6: pd.DataFrame, reasoner: str, cond: str, tie: float = RANK_TIE) -> list[str]:
    """Table 6: proxy F1 leader and section diversity, content-only against structure-aware."""
    if t6.empty:
        return []
    reported = paper.table6()
    out = [leader(f"Answers ({reasoner} reasoner, {cond} condition)", t6["Avg F1"], "proxy F1 (answer vs question)",
                  tie, reported["Avg F1"], "paper-reported with GPT-4o-mini")]
    c, s = group_mean(t6["Sec Diversity"], CONTENT_ONLY), group_mean(t6["Sec Diversity"], STRUCTURE_AWARE)
    if not (math.isnan(c) or math.isnan(s)):
        d = s - c
        verdict = ("no clear difference" if abs(d) < SECTION_TIE else
                   "structure-aware contexts span more sections" if d > 0 else "content-only contexts span more")
        pc, ps = group_mean(reported["Sec Diversity"], CONTENT_ONLY), group_mean(reported["Sec Diversity"], STRUCTURE_AWARE)
        out.append(f"Section diversity of the answer contexts: content-only {c:.2f}, structure-aware {s:.2f} "
                   f"(Δ {d:+.2f}, size {side(abs(d), SECTION_TIE)} sections: {verdict}); paper-reported "
                   f"{pc:.2f} vs {ps:.2f}.")
    return out


def evidence_paragraphs(evidence: pd.DataFrame | None, cond: str, tie: float = RANK_TIE) -> str | None:
    """Ours only: which strategy reaches the two evidence paragraphs most often in ``cond``."""
    if evidence is None or evidence.empty:
        return None
    cols = sorted((c for c in evidence.columns if c[0] == cond and c[1].startswith("ctx R@")),
                  key=lambda c: int(c[1].split("@")[1]))
    if not cols:
        return None
    text = leader(f"Evidence paragraphs ({cond} condition, ours only)", evidence[cols[0]], cols[0][1], tie)
    r = evidence[cols[0]].dropna().sort_values(ascending=False, kind="stable")
    if text and r.index[0] == "GraLC-RAG (+Graph)" and (len(r) == 1 or r.iloc[0] - r.iloc[1] >= tie):
        text += (" Its concept-proximity score matches the template slots, which are vocabulary concepts: an "
                 "inside advantage on these questions.")
    return text


def _moves(sweep: pd.DataFrame, col: str, ref: float) -> tuple[str, float]:
    others = [x for x in sweep.index if x != ref]
    diffs = [float(sweep.loc[x, col] - sweep.loc[ref, col]) for x in others]
    listed = " and ".join(f"{d:+.3f} at λ = {x:g}" for d, x in zip(diffs, others))
    return listed, max(abs(d) for d in diffs)


PAPER_LAM = 0.1      # §3.1.4: the gate's initial value, the only λ the paper reports


def reported_infusion_delta(cond: str, short: str) -> tuple[str, float] | None:
    """The paper's MRR change from KG infusion at λ = 0.1 with everything else equal: its GraLC-RAG (KG)
    row minus its Structure-Aware row — Table 4 for the introduction, partial and full conditions,
    Table 1 (PubMedQA*) for the short-text condition; None for any other."""
    if cond in paper.CONDITION_ORDER:
        t, where = paper.table4().loc[cond]["MRR"], f"Table 4, {cond}"
    elif cond == short:
        t, where = paper.table1()["MRR"], "Table 1, PubMedQA*"
    else:
        return None
    return where, float(t["GraLC-RAG (KG)"] - t["Structure-Aware"])


def infusion(sweep: pd.DataFrame, cond: str, tie: float = RANK_TIE,
             reported: tuple[str, float] | None = None) -> list[str]:
    """The λ ablation: retrieval changes against the first λ, sized per metric, and how far the
    infused token vectors turned (mean cosine to the originals over the mention tokens).
    ``reported``: (where, value) of the paper's MRR change from infusion at λ = 0.1, quoted beside our
    λ = 0.1 − λ = 0 when both λ ran."""
    lams = list(sweep.index)
    if len(lams) < 2:
        return [f"λ ablation: only λ = {lams[0]:g} ran, so there is nothing to compare." if lams else
                "λ ablation: no λ ran."]
    ref = lams[0]
    parts, moved = [], []
    metrics = [c for c in sweep.columns if c.startswith(("MRR@", "R@", "SecCov@"))]
    missing = [c for c in metrics if sweep[c].isna().any()]
    for col in [c for c in metrics if c not in missing]:
        limit = SECTION_TIE if col.startswith("SecCov@") else tie
        listed, largest = _moves(sweep, col, ref)
        if largest >= limit:
            moved.append(col)
        parts.append(f"{col} moves by {listed} (largest {largest:.3f}, {side(largest, limit)}: "
                     f"{'a measurable change' if largest >= limit else 'no measurable change'})")
    if missing:
        why = " (the documents have no sections)" if all(c.startswith("SecCov@") for c in missing) else ""
        parts.append(f"{' and '.join(missing)} not measured in this run{why}")
    mrr = next((c for c in metrics if c.startswith("MRR@") and c not in missing), None)
    if reported and mrr and ref == 0 and PAPER_LAM in sweep.index:
        ours = float(sweep.loc[PAPER_LAM, mrr] - sweep.loc[ref, mrr])
        parts.append(f"at the paper's λ = {PAPER_LAM:g} our {mrr} changes by {ours:+.3f} against no infusion, "
                     f"paper-reported {reported[1]:+.4f} (GraLC-RAG (KG) minus Structure-Aware, {reported[0]})")
    out = [f"λ ablation (gralc-kg, {cond} condition, against λ = {ref:g}): " + "; ".join(parts) + "."]
    changed = [c for c in sweep.columns if c.startswith("top ")]
    if changed:
        share = sweep[changed[0]]
        chunks = ("; chunks: " + ", ".join(f"{int(sweep.loc[x, 'chunks'])} (λ = {x:g})" for x in lams)
                  if "chunks" in sweep.columns else "")
        out.append(f"The top {changed[0].split()[1]} differs from λ = {ref:g}'s for "
                   + ", ".join(f"{share[x]:.0%} of questions at λ = {x:g}" for x in lams if x != ref) + chunks + ".")
    if MENTION_COSINE in sweep.columns:
        turn = 1 - sweep[MENTION_COSINE]
        worst = float(turn.max())
        turned = worst >= COSINE_TIE
        out.append("Infused mention tokens keep a mean cosine to their original vectors of "
                   + ", ".join(f"{sweep.loc[x, MENTION_COSINE]:.4f} at λ = {x:g}" for x in lams)
                   + " (all tokens: " + ", ".join(f"{sweep.loc[x, ALL_COSINE]:.4f}" for x in lams)
                   + f"); the largest 1 − cos is {worst:.4f} ({side(worst, COSINE_TIE)}: the vectors "
                   f"{'turn measurably' if turned else 'barely turn'}).")
        if moved:
            verdict = f"the random infusion changes retrieval measurably ({', '.join(moved)})."
        elif turned:
            verdict = "the random infusion turns the mention vectors but leaves retrieval within the thresholds."
        else:
            verdict = "the random infusion barely touches the vectors and leaves retrieval within the thresholds."
        out.append(f"Over λ ∈ {{{', '.join(f'{x:g}' for x in lams)}}}, {verdict}")
    return out


def table1_intervals_sentence(t1_side: pd.DataFrame, where: str, like_for_like: bool) -> str:
    """How many of Table 1's paper-reported numbers lie inside our 95% intervals (``t1_side``:
    ``experiment.beside_paper`` with intervals), or why the intervals say nothing about them."""
    if not like_for_like:
        return (f"Table 1 ({where}): other data than the paper's PubMedQA*, so our 95% intervals are not set "
                "against its numbers (column 'paper in our 95% CI': not like-for-like).")
    parts = []
    for metric in dict.fromkeys(c for c, _ in t1_side.columns):
        col = t1_side[(metric, IN_CI)]
        decided = col[col.isin(["yes", "no"])]
        if len(decided):
            parts.append(f"{metric} {int((decided == 'yes').sum())}/{len(decided)}")
    return (f"Table 1 ({where}): the paper-reported number lies inside our 95% interval for "
            + ", ".join(parts) + " strategies.") if parts else ""


def order_sentence(order: pd.DataFrame, where: str) -> str:
    """Our MRR order and which of its places the questions can tell apart (``experiment.table1_order``),
    set against the paper's order: a pair the paper ranks the other way contradicts it only when our
    verdict on it is decided (Holm-adjusted p < 0.05 across the pairs)."""
    if order.empty:
        return ""
    ranked = list(dict.fromkeys(list(order["method"]) + list(order["below"])))
    reported = paper.table1()["MRR"]
    decided = order[order["verdict"].isin(["supported", "contradicted"])]
    flipped = order[[reported.get(a, math.nan) < reported.get(b, math.nan) for a, b in zip(order["method"], order["below"])]]
    flipped_decided = flipped[flipped["verdict"] == "supported"]
    ns = sorted({int(v) for v in order["n"]})
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]} to {ns[-1]}"
    few = int((order["verdict"] == "cannot be decided at this n").sum())
    text = (f"Table 1 ({where}): our MRR order is {' > '.join(ranked)} (n = {n} questions); "
            f"{len(decided)} of its {len(order)} pairs are told apart (Holm-adjusted p < 0.05 across the pairs"
            + (f"; {few} cannot be decided with this many questions" if few else "")
            + (f"; MDE up to {order['mde'].max():.3f}" if order["mde"].notna().any() else "") + ").")
    if len(flipped):
        text += (f" The paper-reported order reverses {len(flipped)} of these pairs; "
                 + (f"{len(flipped_decided)} of them are decided here ("
                    + ", ".join(f"{a} > {b} by {format_ci(d, lo, hi)}" for a, b, d, lo, hi in
                                zip(flipped_decided["method"], flipped_decided["below"], flipped_decided["diff"],
                                    flipped_decided["ci_low"], flipped_decided["ci_high"]))
                    + ")" if len(flipped_decided) else "none is decided here, so the two orders do not contradict each other")
                 + ".")
    return text


def findings(t1: pd.DataFrame, t4: pd.DataFrame, t5: pd.DataFrame, t6: pd.DataFrame, sweep: pd.DataFrame, *,
             short: str, reasoner: str, generation_condition: str, sweep_condition: str,
             questions: Mapping[str, int], answered: int, evidence: pd.DataFrame | None = None) -> list[str]:
    """Every sentence, in the notebook's order: the thresholds, Tables 1–2 (on the ``short``
    condition), 4–5 (the longest condition that ran), 6 (``answered`` questions answered on
    ``generation_condition``), the evidence paragraphs, the λ ablation (on ``sweep_condition``).
    ``questions``: the number of questions per condition, which sets each rank threshold."""
    tie = {c: rank_tie(n) for c, n in questions.items()}
    lines = [thresholds(questions, answered)]
    lines += short_text(t1, f"{short} condition", tie.get(short, RANK_TIE))
    lines += [ablation(t1, f"{short} condition", tie.get(short, RANK_TIE))]
    cond = longest_condition(list(t4.index.get_level_values(0))) if not t4.empty else None
    lines.append(by_length(t4, tie.get(cond, RANK_TIE)))
    if cond is not None:
        lines += coverage(t5, cond) + [cross_section(t5, cond), evidence_paragraphs(evidence, cond, tie.get(cond, RANK_TIE))]
    lines += answers(t6, reasoner, generation_condition, rank_tie(answered))
    lines += infusion(sweep, sweep_condition, tie.get(sweep_condition, RANK_TIE),
                      reported_infusion_delta(sweep_condition, short))
    return [line for line in lines if line]
