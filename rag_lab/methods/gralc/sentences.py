"""The sentences notebook 04 prints under Table 5 (CS Recall and the two SecCov readings) and under the λ
ablation, each written from the numbers of its table so none can say more than the table holds."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ...evaluation.findings import finding_sentences
from ...evaluation.statistics import SUPPORTED, decided
from .experiment import ALL_COSINE, MENTION_COSINE, Sweep
from .tables import READINGS

REPRODUCES = {True: "reproduces", False: "does not reproduce"}
TURNED = 0.01    # below a 1 − cos of 0.01 a token vector points where it did (a size, not a test)


def cs_sentence(t5: pd.DataFrame, ci_low: pd.DataFrame, k: int, long_conditions: Sequence[str],
                longest: str | None) -> str | None:
    """CS Recall@k in the longest condition (its range, how many intervals lie above 0), against the paper's
    0.000, and in the shorter conditions, whose texts end before each template's second section."""
    col = f"CS Recall@{k}"
    if not longest:
        return None
    cs = t5[f"{col} {longest}"].dropna()
    low = ci_low[f"{col} {longest}"].reindex(cs.index)
    if cs.empty:
        return None
    if cs.max() > 0:
        said = (f"{cs.min():.3f} to {cs.max():.3f} (best {cs.idxmax()}); the 95% interval lies above 0 for "
                f"{(low > 0).sum()} of {len(cs)} strategies (lowest lower bound {low.min():.3f}), against the "
                "paper-reported 0.000 for every strategy")
    else:
        said = "0.000 for every strategy, as paper-reported"
    # the conditions shorter than the longest
    shorter = [c for c in long_conditions[-2::-1] if f"{col} {c}" in t5.columns]
    if shorter:
        shorter_max = t5[[f"{col} {c}" for c in shorter]].max().max()
        if shorter_max == 0:
            said += (f"; in the {' and '.join(shorter)} condition it is 0.000 for every strategy, as it must be: "
                     "those texts end before Results and Discussion, where each template's second section lies")
        else:
            said += (f"; in the {' and '.join(shorter)} condition it reaches {shorter_max:.3f} although those texts "
                     "end before Results and Discussion — check how sections were assigned roles")
    return f"{col}, {longest} condition: {said}."


def contrast_sentences(contrast: pd.DataFrame, ks: Sequence[int], longest: str | None) -> list[str]:
    """Table 5c said: at each k in the longest condition both readings' group means and findings and which
    reading reproduces the paper's SecCov finding; then, per reading, how many condition × k cells go which way."""
    pattern, fair = list(READINGS)
    said = []
    for k in sorted(set(ks)):
        if (pattern, k, longest) not in contrast.index or (fair, k, longest) not in contrast.index:
            continue
        pat, fr = contrast.loc[(pattern, k, longest)], contrast.loc[(fair, k, longest)]
        rows = contrast.xs((k, longest), level=["k", "condition"]).reset_index()
        found = finding_sentences(rows, name=lambda r: f"{r['reading'].split(':')[0]} reading")
        by_construction = (" — there the content-only strategies score 1.00 on every question by construction (their "
                           "chunks carry no section label, so they count as one)" if pat["content-only"] == 1.0 else "")
        said.append(
            f"SecCov@{k}, {longest} condition, structure-aware minus content-only (each group's mean on a question, "
            "paired by question):\n  the pattern reading (section labels at any level across all retrieved articles, "
            "content-only chunks unlabelled): "
            f"content-only {pat['content-only']:.2f} vs structure-aware {pat['structure-aware']:.2f}, "
            f"paper-reported difference {pat['paper-reported diff']:+.2f}"
            + by_construction
            + ";\n  the fair reading (the source article's sections, every chunk labelled by the section holding most "
            f"of its characters): content-only {fr['content-only']:.2f} vs structure-aware "
            f"{fr['structure-aware']:.2f}.\n  "
            + "\n  ".join(found)
            + "\nThe paper's SecCov finding (structure-aware strategies cover more sections) "
            f"{REPRODUCES[pat['verdict'] == SUPPORTED]} on the pattern reading and "
            f"{REPRODUCES[fr['verdict'] == SUPPORTED]} on the fair reading here.")
    if len(contrast):
        for reading, name in ((pattern, "pattern"), (fair, "fair")):
            v = contrast.xs(reading, level="reading")["verdict"]
            said.append(f"Over all {len(v)} condition × k cells, on the {name} reading structure-aware strategies "
                        f"cover more sections in {(v == SUPPORTED).sum()}, content-only ones in "
                        f"{(v == 'contradicted').sum()}, and {len(v) - v.map(decided).sum()} are not decided.")
    return said


def lambda_sentences(sweep: Sweep, rows: pd.DataFrame, diffs: pd.DataFrame, condition: str,
                     reported: tuple[str, pd.Series] | None, paper_lam: float) -> list[str]:
    """The λ ablation said: each column's findings against the first λ, what was not measured, the change at
    the paper's λ beside the paper's KG minus Structure-Aware (``reported``: where and its MRR column), how
    many top k changed, the chunk counts, how far the mention vectors turned and whether retrieval moved."""
    sw, lams = sweep.table, list(sweep.table.index)
    if len(lams) < 2:
        return [f"λ ablation: only λ = {lams[0]:g} ran, so there is nothing to compare."]
    scored = [c for c in sw.columns if c.startswith(("MRR@", "R@", "SecCov@"))]
    measured = [c for c in scored if sw[c].notna().all() and c in diffs.index]
    missing = [c for c in scored if sw[c].isna().any()]
    moved = [c for c in measured if diffs.loc[c, "verdict"].map(decided).any()]
    parts = [s for m in sweep.metrics for s in finding_sentences(rows[rows["metric"] == m])]
    if missing:
        why = " (the documents have no sections)." if all(c.startswith("SecCov@") for c in missing) else "."
        parts.append(f"{' and '.join(missing)} not measured in this run" + why)
    if reported and measured and measured[0].startswith("MRR@") and lams[0] == 0 and paper_lam in sw.index:
        first = measured[0]
        change, paper_change = (sw.loc[paper_lam, first] - sw.loc[0, first],
                                reported[1]["GraLC-RAG (KG)"] - reported[1]["Structure-Aware"])
        parts.append(f"at the paper's λ = {paper_lam:g} our {first} changes by {change:+.3f} against no infusion, "
                     f"paper-reported {paper_change:+.4f} (GraLC-RAG (KG) minus Structure-Aware, {reported[0]}).")
    changed = next(c for c in sw.columns if c.startswith("top "))
    turn = float((1 - sw[MENTION_COSINE]).max())   # the largest 1 − cos(h′, h)
    turned = turn >= TURNED
    lam_list = ", ".join(f"{x:g}" for x in lams)
    if moved:
        verdict = f"the random infusion changes retrieval beyond the 95% interval ({', '.join(moved)})."
    else:
        how = "turns the mention vectors, but" if turned else "barely touches the vectors, and"
        verdict = f"the random infusion {how} no retrieval change is decided by these questions."
    top = changed.split()[1]
    return [f"λ ablation (gralc-kg, {condition} condition, against λ = {lams[0]:g}, paired by question):\n  "
            + "\n  ".join(parts),
            f"The top {top} differs from λ = {lams[0]:g}'s for "
            + ", ".join(f"{sw.loc[x, changed]:.0%} of questions at λ = {x:g}" for x in lams[1:])
            + "; chunks: " + ", ".join(f"{int(sw.loc[x, 'chunks'])} (λ = {x:g})" for x in lams) + ".",
            "Infused mention tokens keep a mean cosine to their original vectors of "
            + ", ".join(f"{sw.loc[x, MENTION_COSINE]:.4f} at λ = {x:g}" for x in lams)
            + " (all tokens: " + ", ".join(f"{sw.loc[x, ALL_COSINE]:.4f}" for x in lams)
            + f"); the largest 1 − cos is {turn:.4f} ({'≥' if turned else '<'} 0.01: the vectors "
            f"{'turn' if turned else 'barely turn'}).",
            f"Over λ ∈ {{{lam_list}}}, " + verdict]
