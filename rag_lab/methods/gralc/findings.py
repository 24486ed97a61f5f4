"""The sentences the GraLC-RAG notebook prints about its results, built from that run's tables.

Each verdict reads a paired comparison of ``comparisons`` (a difference over the questions both
sides scored, its 95% interval and its Holm-adjusted p within the table's declared family): a
difference is called only when ``uncertainty.decide`` called it (Holm p < 0.05); otherwise the
sentence says the verdict word. No threshold of our own decides a ranking. Where the
paper has the same quantity its number is quoted, labelled paper-reported. A sentence whose premise
does not hold in the run (a condition that did not run, an empty table, a one-value sweep) is left
out or says what is missing.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from ...core.plots import IN_CI
from ...evaluation.decisions import copula, row_verdict, standing, verdict_said
from ...evaluation.statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE, format_ci, format_p
from . import paper
from .comparisons import CEILING, READINGS
from .experiment import ALL_COSINE, MENTION_COSINE

METHOD = ("How the verdicts below are decided: every difference is paired by question (clustered by document), "
          "with one test giving its p and its 95% interval (rag_lab.evaluation.statistics: Tango's test for 0/1 "
          "scores, the paired t-test otherwise), p adjusted by Holm within its table's declared family; a difference "
          "is called only when that p is below 0.05, otherwise the sentence gives the verdict word (inconclusive, or "
          "cannot be decided with its reason). Intervals are each comparison's own, unadjusted for the family. "
          "The paper reports no tests.")
COSINE_TIE = 0.01    # infusion: 1 − cos(h′, h) below this leaves a token vector pointing where it did (a size, not a test)
LONG_CONDITIONS = ("full", "partial", "introduction")   # longest first: the longest run speaks for Tables 4-5
PATTERN, FAIR = list(READINGS)


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


def leader(label: str, ours: pd.Series, order: pd.DataFrame, metric: str, reported: pd.Series | None = None,
           reported_label: str = "paper-reported") -> str | None:
    """Our best strategy, its paired difference from the runner-up (``order``: ``comparisons.order`` on
    the same metric) and where the paper's best strategy stands against it. None when ``ours`` is empty."""
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


def short_text(t1: pd.DataFrame, t1_ci: Mapping[str, pd.DataFrame], order: pd.DataFrame, where: str,
               ceiling: Mapping | None = None) -> list[str]:
    """Table 1: the leader, and whether the lowest MRR lies above the ceiling the paper reports, from the
    test ``comparisons.ceiling_test`` made (``ceiling``; without it the sentence says it was not tested)."""
    if t1.empty or "MRR" not in t1 or t1["MRR"].dropna().empty:
        return [f"Table 1 ({where}): no strategy has an MRR, so nothing to compare."]
    reported = paper.table1()["MRR"]
    out = [leader(f"Table 1 ({where})", t1["MRR"], order, "MRR", reported)]
    mrr = t1["MRR"].dropna()
    who = mrr.idxmin()
    lo, hi = float(t1_ci["ci_low"]["MRR"].get(who, math.nan)), float(t1_ci["ci_high"]["MRR"].get(who, math.nan))
    shown = format_ci(float(mrr[who]), lo, hi)
    setting = f"the near-ceiling setting the paper reports on its abstracts (paper-reported lowest {reported.min():.3f})"
    if ceiling is None:
        out.append(f"The lowest MRR, {shown} ({who}): whether it lies above {CEILING:g} was not tested.")
        return out
    test = (f"minus {CEILING:g}: {format_ci(ceiling['diff'], ceiling['ci_low'], ceiling['ci_high'])}, "
            f"n = {int(ceiling['n'])}, p = {format_p(ceiling['p'])}")
    v = ceiling["verdict"]
    if v == SUPPORTED:
        out.append(f"The lowest MRR, {shown} ({who}), lies above {CEILING:g} ({test}: {SUPPORTED}): {setting}.")
    elif v == CONTRADICTED:
        out.append(f"The lowest MRR, {shown} ({who}), lies below {CEILING:g} ({test}: {CONTRADICTED}): not {setting}.")
    else:
        out.append(f"The lowest MRR, {shown} ({who}): whether it lies above {CEILING:g} ({test}) {copula(v)}"
                   f"{verdict_said(ceiling)}, so whether this is {setting} is not decided.")
    return out


def ablation(diffs: pd.DataFrame, where: str) -> str | None:
    """Table 2: each component's ΔMRR against late chunking (``comparisons.ablation``)."""
    if diffs.empty:
        return None
    reported = paper.table2()
    parts = []
    for step, row in diffs.iterrows():
        rep = f"; paper-reported {reported.loc[step, 'ΔMRR']:+.4f}" if step in reported.index else ""
        parts.append(f"{step} {standing(row, 'raises MRR', 'lowers MRR')}{rep}")
    moved = sum(row_verdict(r) in (SUPPORTED, CONTRADICTED) for _, r in diffs.iterrows())
    return (f"Ablation ({where}, ΔMRR against the late-chunking base, paired by question): " + "; ".join(parts)
            + f". {moved} of {len(parts)} components change MRR by a decided difference (Holm p < 0.05 across the steps).")


def longest_condition(conditions: Sequence[str]) -> str | None:
    return next((c for c in LONG_CONDITIONS if c in conditions), None)


def by_length(t4: pd.DataFrame, order: pd.DataFrame) -> str:
    """Table 4: the leader in the longest condition that ran (``order``: that condition's pairwise
    table), or why there is none."""
    cond = longest_condition(list(t4.index.get_level_values(0))) if not t4.empty else None
    if cond is None:
        return ("Tables 4–5: no introduction, partial or full condition ran on this data, so there is no ranking "
                "by document length and no section coverage to report.")
    return leader(f"Table 4 ({cond} condition)", t4.loc[cond]["MRR"], order, "MRR", paper.table4().loc[cond]["MRR"])


def coverage(contrast: pd.DataFrame, cond: str) -> list[str]:
    """Table 5's headline: structure-aware minus content-only SecCov in ``cond`` on both readings
    (``comparisons.seccov_contrast``), which reading reproduces the paper's pattern, and the count
    over every condition and k."""
    if contrast.empty:
        return []
    out = []
    ks = sorted({k for _, k, c in contrast.index if c == cond})
    words = ("structure-aware strategies cover more sections", "content-only strategies cover more sections")
    for k in ks:
        if (PATTERN, k, cond) not in contrast.index or (FAIR, k, cond) not in contrast.index:
            continue
        pat, fair = contrast.loc[(PATTERN, k, cond)], contrast.loc[(FAIR, k, cond)]
        text = (f"SecCov@{k}, {cond} condition, structure-aware minus content-only (each group's mean, paired by "
                f"question): on the pattern reading (section labels at any level across all retrieved articles, content-only "
                f"chunks unlabelled) {standing(pat, *words)}, "
                f"paper-reported {pat['paper-reported diff']:+.2f}")
        if pat["content-only"] == 1.0:
            text += (" — there the content-only strategies score 1.00 on every question by construction (their "
                     "chunks carry no section label, so they count as one)")
        text += (f"; on the source article's sections, every chunk labelled by the section holding most of its "
                 f"characters (the fair reading), content-only {fair['content-only']:.2f} vs structure-aware "
                 f"{fair['structure-aware']:.2f}: {standing(fair, *words)}.")
        yes = lambda r: "reproduces" if row_verdict(r) == SUPPORTED else "does not reproduce"   # noqa: E731
        text += (f" The paper's SecCov finding (structure-aware strategies cover more sections) {yes(pat)} on the "
                 f"pattern reading and {yes(fair)} on the fair reading here.")
        out.append(text)
    for reading, name in ((PATTERN, "the pattern reading"), (FAIR, "the fair reading")):
        part = contrast.xs(reading, level="reading")
        verdicts = [row_verdict(r) for _, r in part.iterrows()]
        out.append(f"Over all {len(verdicts)} condition × k cells, on {name} structure-aware strategies cover more "
                   f"sections in {verdicts.count(SUPPORTED)}, content-only ones in {verdicts.count(CONTRADICTED)}, "
                   f"and {len(verdicts) - verdicts.count(SUPPORTED) - verdicts.count(CONTRADICTED)} are not decided.")
    return out


def cross_section(t5: pd.DataFrame, t5_ci: Mapping[str, pd.DataFrame], cond: str) -> str | None:
    """Table 5: CS Recall in ``cond`` against the paper's 0 for every strategy (read from our intervals),
    and in the shorter conditions."""
    cols = [c for c in t5.columns if c.startswith("CS Recall@")]
    main = next((c for c in cols if c.endswith(f" {cond}")), None)
    if main is None:
        return None
    v, name = t5[main].dropna(), main.rsplit(" ", 1)[0]
    if v.empty:
        return None
    low = t5_ci["ci_low"][main].reindex(v.index)
    above = int((low > 0).sum())
    if v.max() > 0:
        text = (f"{name}, {cond} condition: {v.min():.3f} to {v.max():.3f} (best {v.idxmax()}); the 95% interval "
                f"lies above 0 for {above} of {len(v)} strategies (lowest lower bound {low.min():.3f}), against the "
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


def answers(t6: pd.DataFrame, order: pd.DataFrame, diversity: Mapping | None, reasoner: str, cond: str) -> list[str]:
    """Table 6: proxy F1 leader (``order``: pairwise on proxy F1) and section diversity, structure-aware
    minus content-only (``diversity``: ``comparisons.group_difference``)."""
    if t6.empty:
        return []
    reported = paper.table6()
    out = [leader(f"Answers ({reasoner} reasoner, {cond} condition)", t6["Avg F1"], order,
                  "proxy F1 (answer vs question)", reported["Avg F1"], "paper-reported with GPT-4o-mini")]
    if diversity is not None and not math.isnan(float(diversity["diff"])):
        content, structure = paper.ORDER[:3], paper.ORDER[3:]     # content-only, structure-aware
        pc, ps = reported.loc[content, "Sec Diversity"].mean(), reported.loc[structure, "Sec Diversity"].mean()
        out.append(f"Section diversity of the answer contexts: content-only {diversity['second']:.2f}, structure-aware "
                   f"{diversity['first']:.2f}, difference "
                   f"{standing(diversity, 'structure-aware contexts span more sections', 'content-only contexts span more sections')}; "
                   f"paper-reported {pc:.2f} vs {ps:.2f} (its content-only 1.00 is the unlabelled reading of Table 5).")
    return out


def evidence_paragraphs(evidence: pd.DataFrame | None, order: pd.DataFrame, cond: str) -> str | None:
    """Ours only: which strategy reaches the two evidence paragraphs most often in ``cond`` (``order``:
    pairwise on the smallest-k context recall there)."""
    if evidence is None or evidence.empty or cond not in evidence.index.get_level_values(0):
        return None
    metric = min((c for c in dict.fromkeys(evidence.columns.get_level_values(0)) if c.startswith("ctx R@")),
                 key=lambda c: int(c.split("@")[1]), default=None)
    if metric is None:
        return None
    values = evidence.loc[cond][(metric, "ours")]
    text = leader(f"Evidence paragraphs ({cond} condition, ours only)", values, order, metric)
    r = values.dropna().sort_values(ascending=False, kind="stable")
    if text and r.index[0] == "GraLC-RAG (+Graph)" and len(r) > 1:
        d = pair(order, r.index[0], r.index[1])
        if d is not None and row_verdict(d) == SUPPORTED:
            text += (" Its concept-proximity score matches the template slots, which are vocabulary concepts: an "
                     "inside advantage on these questions.")
    return text


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


def infusion(sweep: pd.DataFrame, diffs: pd.DataFrame, cond: str, reported: tuple[str, float] | None = None) -> list[str]:
    """The λ ablation: each retrieval column at every λ against the first λ, paired by question (``diffs``:
    ``comparisons.sweep_differences``), and how far the infused token vectors turned (mean cosine to the
    originals over the mention tokens, a size compared with ``COSINE_TIE``). ``reported``: (where, value)
    of the paper's MRR change from infusion at λ = 0.1, quoted beside our λ = 0.1 − λ = 0 when both ran."""
    lams = list(sweep.index)
    if len(lams) < 2:
        return [f"λ ablation: only λ = {lams[0]:g} ran, so there is nothing to compare." if lams else
                "λ ablation: no λ ran."]
    ref = lams[0]
    parts, moved = [], []
    metrics = [c for c in sweep.columns if c.startswith(("MRR@", "R@", "SecCov@"))]
    missing = [c for c in metrics if sweep[c].isna().any()]
    for col in [c for c in metrics if c not in missing]:
        rows = [(x, diffs.loc[(col, x)]) for x in lams[1:] if (col, x) in diffs.index]
        if not rows:
            continue
        if any(row_verdict(r) in (SUPPORTED, CONTRADICTED) for _, r in rows):
            moved.append(col)
        parts.append(f"{col} " + ", ".join(f"at λ = {x:g} {standing(r, 'higher', 'lower')}" for x, r in rows))
    if missing:
        why = " (the documents have no sections)" if all(c.startswith("SecCov@") for c in missing) else ""
        parts.append(f"{' and '.join(missing)} not measured in this run{why}")
    mrr = next((c for c in metrics if c.startswith("MRR@") and c not in missing), None)
    if reported and mrr and ref == 0 and PAPER_LAM in sweep.index:
        ours = float(sweep.loc[PAPER_LAM, mrr] - sweep.loc[ref, mrr])
        parts.append(f"at the paper's λ = {PAPER_LAM:g} our {mrr} changes by {ours:+.3f} against no infusion, "
                     f"paper-reported {reported[1]:+.4f} (GraLC-RAG (KG) minus Structure-Aware, {reported[0]})")
    out = [f"λ ablation (gralc-kg, {cond} condition, against λ = {ref:g}, paired by question): " + "; ".join(parts) + "."]
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
                   + f"); the largest 1 − cos is {worst:.4f} ({'≥' if turned else '<'} {COSINE_TIE:g}: the vectors "
                   f"{'turn' if turned else 'barely turn'}).")
        if moved:
            verdict_ = f"the random infusion changes retrieval beyond the 95% interval ({', '.join(moved)})."
        elif turned:
            verdict_ = "the random infusion turns the mention vectors, but no retrieval change is decided by these questions."
        else:
            verdict_ = "the random infusion barely touches the vectors, and no retrieval change is decided by these questions."
        out.append(f"Over λ ∈ {{{', '.join(f'{x:g}' for x in lams)}}}, {verdict_}")
    return out


def table1_intervals_sentence(t1_side: pd.DataFrame, where: str, like_for_like: bool) -> str:
    """How many of Table 1's paper-reported numbers lie inside our 95% intervals (``t1_side``:
    ``tables.beside_paper`` with intervals), or why the intervals say nothing about them."""
    if not like_for_like:
        return (f"Table 1 ({where}): other data than the paper's PubMedQA*, so our 95% intervals are not set "
                "against its numbers (the table prints no difference from them).")
    parts = []
    for metric in dict.fromkeys(c for c, _ in t1_side.columns):
        col = t1_side[(metric, IN_CI)]
        decided = col[col.isin(["yes", "no"])]
        if len(decided):
            parts.append(f"{metric} {int((decided == 'yes').sum())}/{len(decided)}")
    return (f"Table 1 ({where}): the paper-reported number lies inside our 95% interval for "
            + ", ".join(parts) + " strategies.") if parts else ""


def order_sentence(order: pd.DataFrame, where: str) -> str:
    """Our MRR order and which of its places the questions can tell apart (``comparisons.order``),
    set against the paper's order: a pair the paper ranks the other way contradicts it only when our
    verdict on it is decided (Holm-adjusted p < 0.05 across the pairs)."""
    if order.empty:
        return ""
    ranked = list(dict.fromkeys(list(order["method"]) + list(order["below"])))
    reported = paper.table1()["MRR"]
    decided = order[order["verdict"].isin([SUPPORTED, CONTRADICTED])]
    flipped = order[[reported.get(a, math.nan) < reported.get(b, math.nan) for a, b in zip(order["method"], order["below"])]]
    flipped_decided = flipped[flipped["verdict"] == SUPPORTED]
    ns = sorted({int(v) for v in order["n"]})
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]} to {ns[-1]}"
    few = int((order["verdict"] == UNDECIDABLE).sum())
    text = (f"Table 1 ({where}): our MRR order is {' > '.join(ranked)} (n = {n} questions); "
            f"{len(decided)} of its {len(order)} pairs are told apart (Holm-adjusted p < 0.05 across the pairs"
            + (f"; {few} {UNDECIDABLE}" if few else "")
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


def findings(*, short: str, t1: pd.DataFrame, t1_ci: Mapping[str, pd.DataFrame], t1_order: pd.DataFrame,
             ablation_diffs: pd.DataFrame, t4: pd.DataFrame, t4_order: pd.DataFrame, contrast: pd.DataFrame,
             t5: pd.DataFrame, t5_ci: Mapping[str, pd.DataFrame], t6: pd.DataFrame, f1_order: pd.DataFrame,
             diversity: Mapping | None, reasoner: str, generation_condition: str, sweep: pd.DataFrame,
             sweep_diffs: pd.DataFrame, sweep_condition: str, evidence: pd.DataFrame | None = None,
             evidence_order: pd.DataFrame | None = None, ceiling: Mapping | None = None) -> list[str]:
    """Every sentence, in the notebook's order: how verdicts are decided, the SecCov headline (Table 5,
    the longest condition that ran), Tables 1–2 (on the ``short`` condition), 4, CS Recall, the evidence
    paragraphs, 6 (answers on ``generation_condition``), the λ ablation (on ``sweep_condition``). Each
    order / diffs argument is the ``comparisons`` table behind the sentence; ``ceiling``:
    ``comparisons.ceiling_test`` on the short condition."""
    lines = [METHOD]
    cond = longest_condition(list(t4.index.get_level_values(0))) if not t4.empty else None
    if cond is not None:
        lines += coverage(contrast, cond)
    lines += short_text(t1, t1_ci, t1_order, f"{short} condition", ceiling)
    lines += [ablation(ablation_diffs, f"{short} condition")]
    lines.append(by_length(t4, t4_order))
    if cond is not None:
        lines += [cross_section(t5, t5_ci, cond)]
        if evidence_order is not None:
            lines += [evidence_paragraphs(evidence, evidence_order, cond)]
    lines += answers(t6, f1_order, diversity, reasoner, generation_condition)
    lines += infusion(sweep, sweep_diffs, sweep_condition, reported_infusion_delta(sweep_condition, short))
    return [line for line in lines if line]
