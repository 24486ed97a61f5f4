"""The sentences notebook 00 ends with: naive against semantic chunking, computed from the run.

Each comparison is semantic minus naive, paired by question (clustered by document), with its 95%
interval and p; the two (context recall, token F1) are one declared family, decided by
``uncertainty.decide`` (Holm within it) and recorded in the run's ledger; the encoder cut of the
semantic chunks (``evaluation.truncation``) is said beside the retrieval result it helps explain, and the answer comparison says what the reasoner's
answers are (the offline one copies sentences) and that no judge scored them when none ran.
"""
from __future__ import annotations

import pandas as pd

from ...evaluation.decisions import dataset_of, difference_said, family_said, undecided_line
from ...evaluation.ledger import recorded
from ...evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE
from ...evaluation.truncation import EncoderCut, encoder_cut_finding
from ...evaluation.uncertainty import Units, formatted_summary, metric_column, paired_differences, summary_with_ci

VERDICTS = (f"({SUPPORTED}/{CONTRADICTED}: p, Holm-adjusted within the family, below 0.05, on the side the difference "
            f"lies; {INCONCLUSIVE}: these questions could have told the two apart and did not; {UNDECIDABLE}: no test "
            "at 0.05 is possible here, for the reason given)")


def quickstart_family(results: pd.DataFrame, k: int, answer_k: int, methods: tuple[str, str] = ("naive", "semantic"),
                      units: Units | None = None) -> pd.DataFrame:
    """The notebook's one declared family: the second method minus the first on context recall@k and (when
    scored) token F1@answer_k, paired by question, clustered by document with ``units``; recorded in the
    run's ledger."""
    base, other = methods
    scored = {metric_column(m, at) for m, at in zip(results["metric"], results["k"])}
    columns = [c for c in (f"ctx_recall@{k}", f"token_f1@{answer_k}") if c in scored]
    family = f"{other} minus {base} on {', '.join(columns)} (notebook 00)"
    return recorded(paired_differences(results, base, [other], columns, units=units, family=family),
                    dataset_of(results, "unnamed"))


def quickstart_findings(results: pd.DataFrame, cut: EncoderCut, k: int, answer_k: int, reasoner: str,
                        judged: bool, methods: tuple[str, str] = ("naive", "semantic"),
                        units: Units | None = None) -> list[str]:
    """Context recall@k of both methods with intervals, their paired difference, the encoder cut of the
    semantic chunks tied to it, and the answers' token F1 compared the same way, with its caveat; the two
    differences are one declared family (``quickstart_family``), clustered by document with ``units``."""
    base, other = methods
    recall = f"ctx_recall@{k}"
    shown = formatted_summary(summary_with_ci(results, [recall], units=units)).loc[recall]
    family = quickstart_family(results, k, answer_k, methods, units)
    open_rows = family[family["verdict"].astype(str) != UNDECIDABLE]
    said = {r["metric"]: difference_said(r) for _, r in open_rows.iterrows()}
    name = dataset_of(results)
    out = [f"{name + ': c' if name else 'C'}ontext recall@{k}, mean [95% interval] over {shown['n']} questions: "
           + ", ".join(f"{m} {shown[m]}" for m in methods if m in shown.index) + "."]
    undecided = undecided_line(family)        # said once, without numbers, beside any decided row
    if recall in said:
        out += [f"Paired, question by question: {said[recall]}.", VERDICTS + ";", family_said(family) + "."]
    elif not undecided:
        out.append(f"Paired, question by question: {other} - {base} on {recall}: not both scored.")
    if undecided:
        out.append(("" if recall in said else "Paired, question by question: ") + undecided)
    out.append("Why semantic chunks are at a disadvantage here — "
               + encoder_cut_finding(results, cut, base, recall, units=units, decided=family))
    f1 = f"token_f1@{answer_k}"
    if f1 in said:
        what = ("the offline reasoner's answers are extractive (sentences copied from the top contexts), so token F1 "
                "measures word overlap of those sentences with the reference answer, not answer quality"
                if reasoner == "offline" else f"answers written by {reasoner}, scored by word overlap with the reference")
        judge = "" if judged else "; no judge ran, so faithfulness and answer relevancy are not measured"
        out += [f"Answers: {said[f1]}.", f"What that measures: {what}{judge}."]
    return out


def two_recalls_sentence(results: pd.DataFrame, method: str, k: int, answer_k: int) -> str:
    """Why the retrieval table's context recall and the answer table's ID-based context recall differ for
    ``method``: both ask whether the gold passages were retrieved, but ``ctx_recall`` counts a passage found
    when some hit overlaps it (at k), and ragas' ``id_context_recall`` counts the method's own chunks that
    overlap a gold passage (the share of them retrieved at answer_k). Means from the run."""
    means = results[results["method"] == method].groupby(["metric", "k"])["value"].mean()
    ctx, ids = means.get(("ctx_recall", k)), means.get(("id_context_recall", answer_k))
    if ctx is None or ids is None or pd.isna(ctx) or pd.isna(ids):
        return ""
    return (f"Two context recalls for {method}: ctx_recall@{k} = {ctx:.3f} counts a gold passage found when a retrieved "
            f"chunk overlaps at least half of it (or of the chunk); id_context_recall@{answer_k} = {ids:.3f} (ragas' "
            f"ID-based recall) is the share of the {method} chunks overlapping a gold passage that were retrieved, so a "
            "passage spread over two chunks counts half when only one of them is (docs/metrics.md).")
